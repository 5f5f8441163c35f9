"""The audit writer across a lost PostgreSQL connection (issue 38, scenario 3): the records of a batch whose write
failed are kept, the broken connection is dropped, and the next round connects again and writes them, each once.
Before, the writer retried on its dead connection for ever and nothing queued after the loss was written."""

import time
import uuid

import pytest

from helpers.polling import wait_until
from helpers.postgres import end_sessions, fresh_database, postgres_url
from toolwire_server.policy.audit import AuditLog, AuditRecord, read_records

__all__ = ["postgres_url"]

pytestmark = pytest.mark.postgres


def record(tool: str) -> AuditRecord:
    return AuditRecord(time.time(), "agent", tool, "0" * 64, None, "ok", 1.0, 2, None, "r1")


def test_records_queued_after_a_lost_connection_are_written_once(postgres_url: str) -> None:
    url = fresh_database(postgres_url, f"t_{uuid.uuid4().hex[:12]}")
    audit = AuditLog(url, flush_s=0.05)
    try:
        audit.append(record("before"))
        wait_until(lambda: audit.written == 1, "the first record written")
        assert end_sessions(url) == 1  # the writer's own connection
        for n in range(3):
            audit.append(record(f"after-{n}"))
        wait_until(lambda: audit.written == 4, "the records queued after the loss", timeout_s=30)
    finally:
        audit.close()
    assert [r["tool"] for r in read_records(url)] == ["before", "after-0", "after-1", "after-2"]
