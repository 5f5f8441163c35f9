"""What the server enforces and records around every call: the configuration file (config.py), limits and quotas
(counting.py, in-process; postgres_counters.py, across replicas), the audit trail (audit.py), what the call
pipeline's stages (tools/stages.py) apply of them (guard.py: spend, give back, record), and the policy a
configuration file asks for (setup.py)."""
