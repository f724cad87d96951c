"""Measurements of the runner itself: speed and memory of a run (``make bench``)
and how Shadow runs scale with cores (``make scaling``)."""
