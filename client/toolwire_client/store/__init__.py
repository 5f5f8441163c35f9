"""Run stores: where RunState lives between steps and between processes (SQLite by default, PostgreSQL to share)."""
