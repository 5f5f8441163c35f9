"""The worker fleet: runs taken from a DBOS queue by `toolwire worker` processes on any number of machines.

`submit` saves a run in the run store and enqueues its workflow; a worker drives it with the ordinary loop (which
checkpoints every step in the run store); `wait` watches the run store. DBOS brings the queue, its concurrency and
the recovery of a dead worker's runs; the run's lease still fences two drivers of one run.
"""
