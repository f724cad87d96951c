"""tgen traffic models (networkx graphs) and the rules tgen applies to them."""
