"""The fixture of tests/agent2agent: `toolwire agent serve --a2a` started for a test (a2a_serve.py)."""

from agent2agent.a2a_serve import served

__all__ = ["served"]
