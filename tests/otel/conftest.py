"""In-process telemetry for the otel tests (tests/helpers/telemetry.py), cleared between tests."""

from collections.abc import Iterator

import pytest

from helpers.telemetry import Telemetry, install


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    installed = install()
    installed.spans.clear()
    installed.metrics.get_metrics_data()  # drain what earlier tests recorded (histograms use delta temporality)
    yield installed
    installed.spans.clear()
