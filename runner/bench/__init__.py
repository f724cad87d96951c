"""Measurements of the runner itself (``runner bench``): time and memory of
each phase of a run (speed, ``make bench``), writing a report (report),
Shadow's options (shadow-options), runs at once (scaling) and the CPU an
experiment's runs recorded (runs)."""
