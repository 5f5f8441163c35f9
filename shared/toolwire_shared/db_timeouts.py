"""Bounds on every PostgreSQL connection toolwire opens: a process cut off from its database (a partition that drops
packets, a server that went silent) learns so in seconds, not after the kernel's ~130 s of TCP retries, and a
statement stuck behind a lock ends. A value named in the URL itself wins over these."""

import os
from typing import Any

CONNECT_TIMEOUT_S = int(os.environ.get("TOOLWIRE_DB_CONNECT_TIMEOUT_S", "5"))
STATEMENT_TIMEOUT_S = int(os.environ.get("TOOLWIRE_DB_STATEMENT_TIMEOUT_S", "20"))
IDLE_IN_TRANSACTION_S = int(os.environ.get("TOOLWIRE_DB_IDLE_IN_TRANSACTION_S", "10"))
"""A session left inside a transaction this long is ended by the server: a client cut off between two statements of
a transaction (a row locked by its save or lease renewal) would otherwise hold the row until the server's TCP gives
up on it, hours later, and every other worker's write of the run would wait behind it."""
UNACKED_TIMEOUT_S = int(os.environ.get("TOOLWIRE_DB_UNACKED_TIMEOUT_S", "10"))
"""A connection whose sent data the server has not acknowledged for this long is dropped (TCP_USER_TIMEOUT); an
idle one is probed by keepalives after as long, and dropped after 3 unanswered probes."""


def timeouts() -> dict[str, Any]:
    """libpq parameters of the bounds (connect, statement, unacknowledged data, keepalives)."""
    return {
        "connect_timeout": CONNECT_TIMEOUT_S,
        "tcp_user_timeout": UNACKED_TIMEOUT_S * 1000,
        "keepalives": 1,
        "keepalives_idle": UNACKED_TIMEOUT_S,
        "keepalives_interval": 2,
        "keepalives_count": 3,
        "options": f"-c statement_timeout={STATEMENT_TIMEOUT_S * 1000}"
        f" -c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_S * 1000}",
    }


def bounded(url: str) -> str:
    """The connection string `url` with the bounds it does not set itself."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    named = conninfo_to_dict(url)
    missing = {key: value for key, value in timeouts().items() if key not in named}
    return make_conninfo(url, **missing)
