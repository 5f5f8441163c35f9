"""The run store's tables, as an ordered list of migrations applied on open (the same shape on SQLite and PostgreSQL).

Each migration is (version, statements); `{json}` and `{ts}` stand for the dialect's JSON and timestamp types.
Append new migrations at the end; never edit one that has shipped.
"""

MIGRATIONS: list[tuple[int, list[str]]] = [
    (
        1,
        [
            """CREATE TABLE runs (
                run_id TEXT PRIMARY KEY,
                agent_name TEXT NOT NULL,
                task TEXT NOT NULL,
                status TEXT NOT NULL,
                steps INTEGER NOT NULL,
                tokens INTEGER NOT NULL,
                cost_usd DOUBLE PRECISION,
                started_at {ts} NOT NULL,
                updated_at {ts} NOT NULL,
                version INTEGER NOT NULL,
                claimed_by TEXT,
                claimed_at {ts},
                state {json} NOT NULL
            )""",
            "CREATE INDEX runs_status ON runs (status)",
            "CREATE INDEX runs_started ON runs (started_at)",
        ],
    ),
    (
        2,
        [
            """CREATE TABLE decisions (
                run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
                call_id TEXT NOT NULL,
                args_hash TEXT NOT NULL,
                decision TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
                reason TEXT,
                decided_at {ts} NOT NULL,
                used_at {ts},
                PRIMARY KEY (run_id, call_id)
            )""",
        ],
    ),
]

LATEST = MIGRATIONS[-1][0]
