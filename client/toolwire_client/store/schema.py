"""The run store's tables, as an ordered list of migrations applied on open (the same shape on SQLite and PostgreSQL).

Each migration is (version, statements); `{json}` and `{ts}` stand for the dialect's JSON and timestamp types.
Append new migrations at the end; never edit one that has shipped.
"""

from toolwire_client.store.text_codec import ESCAPE
from toolwire_shared.persistence import Migration, Schema

MIGRATIONS: list[Migration] = [
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

MIGRATIONS.append(
    (
        3,
        [
            # Decisions and their uses, append-only: a row is never updated or deleted (schema 2's table was not).
            """CREATE TABLE approval_events (
                run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
                call_id TEXT NOT NULL,
                tool TEXT NOT NULL,
                binding TEXT NOT NULL,
                event TEXT NOT NULL CHECK (event IN ('approve', 'reject', 'use', 'tampered')),
                reason TEXT,
                at {ts} NOT NULL
            )""",
            "CREATE INDEX approval_events_call ON approval_events (run_id, call_id)",
            "CREATE UNIQUE INDEX approval_events_one_decision ON approval_events (run_id, call_id)"
            " WHERE event IN ('approve', 'reject')",
            "CREATE UNIQUE INDEX approval_events_one_use ON approval_events (run_id, call_id, binding)"
            " WHERE event = 'use'",
            "DROP TABLE decisions",
        ],
    )
)

MIGRATIONS.append(
    (
        4,
        [
            # Sub-agents: a child run names the run and the delegate call that started it (client/.../delegate.py).
            "ALTER TABLE runs ADD COLUMN parent_run_id TEXT",
            "ALTER TABLE runs ADD COLUMN parent_call_id TEXT",
            "CREATE INDEX runs_parent ON runs (parent_run_id)",
        ],
    )
)


def _escaped(table: str, *columns: str) -> str:
    """Escape the escape character in text written before text_codec.py, so every row reads back through it."""
    sets = ", ".join(f"{c} = REPLACE({c}, '{ESCAPE}', '{ESCAPE}e')" for c in columns)
    where = " OR ".join(f"REPLACE({c}, '{ESCAPE}', '') <> {c}" for c in columns)  # no `%`: psycopg's placeholder
    return f"UPDATE {table} SET {sets} WHERE {where}"


MIGRATIONS.append(
    (
        5,
        [
            # Text columns hold escaped text from here on (NUL cannot be stored in PostgreSQL's TEXT): the state
            # document marks itself when escaped, these columns cannot, so their old rows are brought in line.
            _escaped("runs", "agent_name", "task", "parent_call_id"),
            _escaped("approval_events", "call_id", "tool", "reason"),
        ],
    )
)

MIGRATIONS.append(
    (
        6,
        [
            # Who decided: the approver of each approve / reject (`toolwire approve --as NAME`); NULL before.
            "ALTER TABLE approval_events ADD COLUMN decided_by TEXT",
        ],
    )
)


MIGRATIONS.append(
    (
        7,
        [
            # A person's answers to the questions tools asked (MCP elicitation, `toolwire answer`), append-only, one
            # per question: the record a second answer is refused by (store/answers.py).
            """CREATE TABLE input_answers (
                run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
                call_id TEXT NOT NULL,
                tool TEXT NOT NULL,
                question TEXT NOT NULL,
                action TEXT NOT NULL CHECK (action IN ('accept', 'decline', 'cancel')),
                content TEXT,
                answered_by TEXT,
                at {ts} NOT NULL
            )""",
            "CREATE UNIQUE INDEX input_answers_once ON input_answers (run_id, call_id, question)",
        ],
    )
)

MIGRATIONS.append(
    (
        8,
        [
            # A save appends what settled since the last one instead of rewriting the run (store/layout.py): the
            # `state` column becomes the header, with settled items as placeholders. A whole state (every row
            # before this) is a header with none, read as it is and split on its next save.
            """CREATE TABLE run_log (
                run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                body {json} NOT NULL,
                PRIMARY KEY (run_id, seq)
            )""",
        ],
    )
)

MIGRATIONS.append(
    (
        9,
        [
            # What happened to a run that is on record for people only, never in the model's history: a late
            # outcome, a call that completed on a worker after it had lost the run (store/events.py).
            """CREATE TABLE run_events (
                run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                call_id TEXT NOT NULL,
                tool TEXT NOT NULL,
                detail TEXT NOT NULL,
                recorded_by TEXT NOT NULL,
                at {ts} NOT NULL
            )""",
            "CREATE UNIQUE INDEX run_events_once ON run_events (run_id, kind, call_id, recorded_by)",
        ],
    )
)

LATEST = MIGRATIONS[-1][0]
SCHEMA = Schema("run store", "schema_version", MIGRATIONS, lock="toolwire.runs.migrations")
