"""The driver's lease on a run, as SQL (store/claims.py says what the lease is): taken, renewed and let go by one
statement each, stamped by the database's clock."""

from toolwire_client.store.base import RunAlreadyClaimed
from toolwire_client.store.claims import LEASE_S, holder_has_exited
from toolwire_client.store.rows import RunNotFound
from toolwire_shared.persistence import Tx


def claim(tx: Tx, run_id: str, owner: str) -> None:
    """Free, ours, or run out by the database's clock: taken in one statement (of two takers, one wins)."""
    clock = tx.dialect.clock
    taken = tx.execute(
        f"UPDATE runs SET claimed_by = ?, claimed_at = {clock} WHERE run_id = ?"
        f" AND (claimed_by IS NULL OR claimed_by = ? OR {tx.dialect.older_than('claimed_at')})",
        (owner, run_id, owner, LEASE_S),
    ).rowcount
    if taken == 1:
        return
    row = tx.execute("SELECT claimed_by, claimed_at FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    if row is None:
        raise RunNotFound(run_id)
    holder = row[0]
    if holder is not None and holder_has_exited(holder):
        # Compare-and-set on the exited holder: of two processes taking over, one wins.
        stolen = tx.execute(
            f"UPDATE runs SET claimed_by = ?, claimed_at = {clock} WHERE run_id = ? AND claimed_by = ?",
            (owner, run_id, holder),
        ).rowcount
        if stolen == 1:
            return
    raise RunAlreadyClaimed(
        f"run {run_id} is being driven by another process ({holder}, lease renewed at {str(row[1])[:19]}); wait "
        "for it to finish, or stop it: a stopped driver's run can be resumed at once from the same machine and "
        f"container, elsewhere {LEASE_S:g} s after its last lease renewal"
    )


def renew(tx: Tx, run_id: str, owner: str) -> bool:
    renewed = f"UPDATE runs SET claimed_at = {tx.dialect.clock} WHERE run_id = ? AND claimed_by = ?"
    return bool(tx.execute(renewed, (run_id, owner)).rowcount)


def release(tx: Tx, run_id: str, owner: str) -> None:
    tx.execute(
        "UPDATE runs SET claimed_by = NULL, claimed_at = NULL WHERE run_id = ? AND claimed_by = ?", (run_id, owner)
    )
