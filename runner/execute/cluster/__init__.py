"""Running an experiment's runs on a Dask cluster or on Slurm (through dask-jobqueue).

``options`` reads the ``--executor`` option, ``executors`` makes the
executor it names, ``worker`` is what runs on a
worker, ``dask`` hands the runs out and gathers them, ``slurm`` starts the
workers as Slurm jobs.
"""
