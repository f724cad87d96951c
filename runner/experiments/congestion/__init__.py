"""Congestion: hop-by-hop feedback and windows (BackTap, Marut), N23 and
PCTCP against tor's fixed window and Vegas (tor-patches/0003-0007). Its
analysis gives each mechanism's counters and the rates per class.

Its analyses are in ``analyses.py``: the package itself imports nothing,
so that a spec is read without them."""
