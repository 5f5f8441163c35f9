"""The registry and its one call path: what tools a server offers, loading it from MODULE:ATTR, and running a call."""
