"""Checkpoints of a run being driven: each save made as the owner of this process's lease (a lost lease or a refused
save is the exit it calls for), and the last save, which records at least how the run ended."""

import logging

from toolwire_client.run import exits
from toolwire_client.run.state import RunState, now
from toolwire_client.store.base import LeaseLost, RunStore, SaveRefused
from toolwire_client.store.lease import Lease
from toolwire_shared.words import counted

log = logging.getLogger("toolwire.client.loop")  # the loop's log, where these lines always were


async def save(store: RunStore | None, state: RunState, lease: Lease | None) -> None:
    if store is None:
        return
    state.updated_at = now()
    try:
        await store.save(state, owner=lease.owner if lease else None)
    except LeaseLost as exc:
        raise (lease.lose(str(exc)) if lease else exits.NoLongerDriving(f"stopped: {exc}")) from exc
    except SaveRefused as exc:
        raise exits.SaveFailed(f"stopped after {counted(len(state.steps), 'step')}: {exc}") from exc


async def save_last(store: RunStore | None, state: RunState, lease: Lease | None) -> None:
    """The run's end on record. When the store refuses it, the run ends `save_failed` and only that end is written
    onto the state last saved; when even that fails, the log says so (the store still says `running`)."""
    try:
        await save(store, state, lease)
        return
    except exits.SaveFailed as exc:
        if state.stop_reason != exc.code:
            exits.finish(state, exc)
        refused = exc
    assert store is not None
    try:
        await store.save_end(state, owner=lease.owner if lease else None)
    except Exception as exc:
        log.error(
            "run %s: its end could not be saved either (%s); the store still shows it as last saved, `running`: %s",
            state.run_id,
            exc,
            refused.why,
        )
        return
    log.error("run %s: only its end was saved: %s", state.run_id, refused.why)
