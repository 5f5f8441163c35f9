"""Bad input files: write one, load it, and get back what the loader said when it refused it."""

from collections.abc import Callable
from pathlib import Path

import pytest


def refusal(tmp_path: Path, text: str, load: Callable[[Path], object], error: type[Exception]) -> tuple[Path, str]:
    """Write `text` to bad.toml and load it: `load` must raise `error`; the file and the error's message."""
    file = tmp_path / "bad.toml"
    file.write_text(text)
    with pytest.raises(error) as info:
        load(file)
    return file, str(info.value)
