"""Experiment runner: spec -> generated Tor networks -> simulations -> tables -> report."""
