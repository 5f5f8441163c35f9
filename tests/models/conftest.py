"""Model adapter tests: a loopback fake provider per test and a sleep that records instead of waiting."""

from collections.abc import Iterator

import pytest

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
