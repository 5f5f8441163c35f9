"""Model adapter tests: a loopback fake provider per test and a sleep that records instead of waiting."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers.fake_providers import FakeProvider
from toolwire_client.models.retry import RetryPolicy


class RecordingSleep:
    """Stands in for anyio.sleep: remembers each wait the policy asked for and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


@pytest.fixture
def sleep() -> RecordingSleep:
    return RecordingSleep()


@pytest.fixture
def policy(sleep: RecordingSleep) -> RetryPolicy:
    return RetryPolicy(max_tries=4, sleep=sleep)
