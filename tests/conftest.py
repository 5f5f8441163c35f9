"""Each pytest process (one per xdist worker) gets user folders of its own, inherited by every process it starts: the
suite's runs never share the default run store, seal key, task stores or server logs with another worker's, nor with
the person running the tests."""

import os
import shutil
import tempfile

import pytest

USER_FOLDERS = ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME")
_ROOT = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    root = tempfile.mkdtemp(prefix="toolwire-tests-")
    config.stash[_ROOT] = root
    for variable in USER_FOLDERS:
        os.environ[variable] = os.path.join(root, variable.lower())


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(config.stash.get(_ROOT, ""), ignore_errors=True)
