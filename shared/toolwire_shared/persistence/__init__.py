"""One way to keep toolwire's tables in SQLite or PostgreSQL, for the run store, the task store, the audit trail,
the limit counters and the fleet's tables: the dialect (types, clock, placeholders), one pool of connections per
database, transactions, versioned migrations per store and named advisory locks.

Statements are written once with `?` placeholders; the dialect makes them right for the driver. The engine under it
is the drivers' own DB-API (sqlite3, psycopg): SQLAlchemy Core was measured at 7x the CPU of a store transaction on
SQLite and 2-3x on PostgreSQL (docs/ARCHITECTURE.md, "Persistence")."""

from toolwire_shared.persistence.database import Database, DatabaseMissing
from toolwire_shared.persistence.dialect import POSTGRES, SQLITE, Dialect, is_postgres
from toolwire_shared.persistence.migrations import Migration, On, Schema
from toolwire_shared.persistence.tx import Tx

__all__ = [
    "POSTGRES",
    "SQLITE",
    "Database",
    "DatabaseMissing",
    "Dialect",
    "Migration",
    "On",
    "Schema",
    "Tx",
    "is_postgres",
]
