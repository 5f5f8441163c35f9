"""The browser the console's browser tests share: Debian's chromium, headless, driven by playwright (the system
browser as its executable: nothing is downloaded), one per module. Playwright's sync API runs an event loop in
the test's thread while it is up: a module sets up its runs before asking for it (and reads the store in a thread)."""

from collections.abc import Iterator
from typing import Any

import pytest
from console import CHROMIUM, NO_CHROMIUM


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
