"""Where tools run: worker processes for isolated tools (workers.py on the server side, worker.py in the process)
and the watchdog that names a tool stalling the event loop."""
