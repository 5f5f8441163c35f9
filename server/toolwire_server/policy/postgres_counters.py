"""The limit counters in PostgreSQL, shared by every replica (`serve --workers N`, replicas behind a proxy): one
row per (rule, agent), and one UPSERT per rule a call matches. The row lock the UPSERT takes is what makes a check
atomic across replicas: the same refill-then-spend sums as counting.step, in SQL, on the database's clock."""

import hashlib
from typing import Any

import anyio.to_thread

from toolwire_server.policy.config import LimitRule
from toolwire_server.policy.counting import STALE_IN_FLIGHT_S, Refusal, needed, why_not
from toolwire_shared.persistence import Database, Migration, Schema

MIGRATIONS: list[Migration] = [
    (
        1,
        [
            """CREATE TABLE IF NOT EXISTS toolwire_limits (
                key text PRIMARY KEY,
                tokens double precision NOT NULL,
                at double precision NOT NULL,
                day bigint NOT NULL,
                day_count bigint NOT NULL,
                in_flight integer NOT NULL,
                flight_at double precision NOT NULL,
                admitted boolean NOT NULL
            )""",
        ],
    ),
]
"""The counters' versions (toolwire_limits_schema_version); append new migrations at the end, never edit one that
has shipped."""
SCHEMA = Schema("limit counters", "toolwire_limits_schema_version", MIGRATIONS, lock="toolwire.limits.migrations")

_REFILLED = "LEAST(%(bucket)s::float8, t.tokens + GREATEST(0, EXCLUDED.at - t.at) * %(rate)s::float8)"
_DAY_USED = "(CASE WHEN t.day = EXCLUDED.day THEN t.day_count ELSE 0 END)"
_FLIGHT = f"(CASE WHEN EXCLUDED.at - t.flight_at > {STALE_IN_FLIGHT_S} THEN 0 ELSE t.in_flight END)"
_OK = (
    f"((%(flight_max)s::int IS NULL OR {_FLIGHT} < %(flight_max)s::int)"
    f" AND (%(per_day)s::bigint IS NULL OR {_DAY_USED} < %(per_day)s::bigint)"
    f" AND (NOT %(has_rate)s::boolean OR {_REFILLED} >= %(needed)s::float8))"
)
TAKE = f"""
INSERT INTO toolwire_limits AS t (key, tokens, at, day, day_count, in_flight, flight_at, admitted)
SELECT %(key)s, %(bucket)s::float8 - (CASE WHEN %(has_rate)s::boolean THEN 1 ELSE 0 END), n, floor(n / 86400)::bigint,
       1, (CASE WHEN %(flight_max)s::int IS NULL THEN 0 ELSE 1 END), n, true
FROM (SELECT extract(epoch FROM clock_timestamp())::float8 AS n) AS clock
ON CONFLICT (key) DO UPDATE SET
    tokens = {_REFILLED} - (CASE WHEN {_OK} AND %(has_rate)s::boolean THEN 1 ELSE 0 END),
    at = EXCLUDED.at,
    day = EXCLUDED.day,
    day_count = {_DAY_USED} + (CASE WHEN {_OK} THEN 1 ELSE 0 END),
    in_flight = {_FLIGHT} + (CASE WHEN {_OK} AND %(flight_max)s::int IS NOT NULL THEN 1 ELSE 0 END),
    flight_at = (CASE WHEN {_OK} AND %(flight_max)s::int IS NOT NULL THEN EXCLUDED.at ELSE t.flight_at END),
    admitted = {_OK}
RETURNING admitted, tokens, day_count, in_flight, at"""

REFUND = """
UPDATE toolwire_limits SET tokens = LEAST(%(bucket)s::float8, tokens + (CASE WHEN %(has_rate)s THEN 1 ELSE 0 END)),
    day_count = GREATEST(0, day_count - 1),
    in_flight = GREATEST(0, in_flight - (CASE WHEN %(flight_max)s::int IS NULL THEN 0 ELSE 1 END))
WHERE key = %(key)s"""

GIVE_BACK = "UPDATE toolwire_limits SET in_flight = GREATEST(0, in_flight - 1) WHERE key = ANY(%(keys)s)"


def row_key(index: int, rule: LimitRule, agent: str) -> str:
    """The counter's name: the rule's place and content (replicas with different files never share a counter)."""
    digest = hashlib.sha256(rule.model_dump_json().encode()).hexdigest()[:12]
    return f"{index}:{digest}:{agent}"


def _params(index: int, rule: LimitRule, agent: str) -> dict[str, Any]:
    return {
        "key": row_key(index, rule, agent),
        "bucket": rule.bucket,
        "rate": (rule.per_minute or 0.0) / 60.0,
        "needed": needed(rule),
        "has_rate": rule.per_minute is not None,
        "flight_max": rule.in_flight,
        "per_day": rule.per_day,
    }


class PostgresCounters:
    """Counters shared through PostgreSQL; the kit's pool of asynchronous connections per process, opened on first
    use, each statement on its own (the UPSERT's row lock is the check's atomicity)."""

    def __init__(self, url: str, pool_size: int = 8) -> None:
        self.url = url
        self.db = Database(url, connections=pool_size, asynchronous=True)
        self._migrated = False

    async def take(self, agent: str, rules: list[tuple[int, LimitRule]]) -> Refusal | None:
        if not self._migrated:
            await anyio.to_thread.run_sync(self._migrate)
            self._migrated = True
        taken: list[dict[str, Any]] = []
        for index, rule in rules:
            params = _params(index, rule, agent)
            [(admitted, tokens, day_count, in_flight, now)] = await self.db.aexecute(TAKE, params)
            if not admitted:
                for earlier in taken:
                    await self.db.aexecute(REFUND, earlier)
                return why_not(rule, tokens, day_count, in_flight, now) or Refusal(rule, "per_minute", 0.0)
            taken.append(params)
        return None

    def _migrate(self) -> None:
        """Replicas starting at once: one migrates, the rest wait for its lock."""
        db = Database(self.url)
        try:
            db.migrate(SCHEMA)
        finally:
            db.close()

    async def give_back(self, agent: str, rules: list[tuple[int, LimitRule]]) -> None:
        keys = [row_key(index, rule, agent) for index, rule in rules if rule.in_flight is not None]
        if keys:
            await self.db.aexecute(GIVE_BACK, {"keys": keys})

    async def aclose(self) -> None:
        await self.db.aclose()
