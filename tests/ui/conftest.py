"""The browser the console's browser tests share: Debian's chromium, headless, driven by playwright (the system
browser as its executable: nothing is downloaded), one per module. Playwright's sync API runs an event loop in
the test's thread while it is up: a module sets up its runs before asking for it (and reads the store in a thread)."""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console import CHROMIUM, NO_CHROMIUM

from helpers.cli import REPO


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tests' screenshots go: docs/ with TOOLWIRE_SCREENSHOTS=docs (to refresh the pictures the docs
    show), else a temp folder, so a test run leaves the checkout as it found it."""
    return REPO / "docs" if os.environ.get("TOOLWIRE_SCREENSHOTS") == "docs" else tmp_path_factory.mktemp("shots")
