"""A per-provider rate limit across the fleet: at most N model requests per minute to one provider, counted in the
shared database, so three workers on two machines share one budget.

Why not DBOS's queue `limiter`: it limits how many workflows start per period, and a fleet workflow is a whole run
of many model calls, so it could not say "requests per minute". The limit here sits on each model call instead, as
a wrapper around the run's model; a provider's own retries inside one call are not counted again."""

import time

import anyio

from toolwire_client.models.base import Model, ModelReply, WrappedModel
from toolwire_client.store import SqlRunStore
from toolwire_client.store.sql import Tx
from toolwire_shared.messages import Message
from toolwire_shared.tools import ToolSpec

WINDOW_S = 60.0


async def take_slot(store: SqlRunStore, provider: str, per_minute: int) -> float:
    """Record a request to `provider` and return 0 if fewer than `per_minute` were made in the last minute, else
    record nothing and return how long to wait. One writer at a time per store (PostgreSQL: an advisory lock)."""

    def attempt(tx: Tx) -> float:
        tx.lock("toolwire.fleet.model_requests")
        now = time.time()
        tx.execute("DELETE FROM fleet_model_requests WHERE provider = ? AND at < ?", (provider, now - WINDOW_S))
        row = tx.execute(
            "SELECT COUNT(*), MIN(at) FROM fleet_model_requests WHERE provider = ?", (provider,)
        ).fetchone()
        if int(row[0]) < per_minute:
            tx.execute("INSERT INTO fleet_model_requests (provider, at) VALUES (?, ?)", (provider, now))
            return 0.0
        return max(0.01, float(row[1]) + WINDOW_S - now)

    return await store.transaction(attempt)


class RateLimited(WrappedModel):
    """The run's model, each call waiting for a slot of its provider's fleet-wide budget first."""

    def __init__(self, inner: Model, store: SqlRunStore, per_minute: int) -> None:
        super().__init__(inner)
        self.store, self.per_minute = store, per_minute

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        while True:
            wait = await take_slot(self.store, self.provider, self.per_minute)
            if wait <= 0:
                break
            await anyio.sleep(wait)
        return await self.inner.complete(messages, tools, max_output_tokens)
