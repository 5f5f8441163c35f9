"""What the server enforces and records around every call: the configuration file (config.py), limits and quotas
(counting.py, in-process; postgres_counters.py, across replicas), the audit trail (audit.py), the wrapper around
the dispatch table that applies them (guard.py), and the one that a configuration file asks for (setup.py)."""
