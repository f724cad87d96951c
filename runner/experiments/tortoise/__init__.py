"""Tortoise: relays rate-limit clients that are not relays
(tor-patches/0002). Its analysis gives each client's average bandwidth by
group and checks that the limits held.

Its analyses are in ``analyses.py``: the package itself imports nothing,
so that a spec is read without them."""
