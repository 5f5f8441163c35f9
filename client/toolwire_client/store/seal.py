"""A seal on a saved run's configuration: an HMAC under a key only this user can read.

A saved configuration says which commands to start, which URLs to send tokens to and which tools need a person's
approval; anyone who can write the run store can write it. The seal tells the configuration this user's toolwire
saved from one written by anybody else, so `toolwire resume` rebuilds only the former (trusted_servers.py)."""

import functools
import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

import platformdirs

SEAL_KEY = "seal"
"""The field of a saved configuration that holds its seal (itself left out of what is sealed)."""
KEY_FILE_ENV = "TOOLWIRE_SEAL_KEY_FILE"
"""Where the key is, when not in the user data dir (e.g. one key for a user's machines that share a store)."""


def key_path() -> Path:
    return Path(os.environ.get(KEY_FILE_ENV) or Path(platformdirs.user_data_dir("toolwire")) / "seal.key")


def _key() -> bytes:
    return _key_at(key_path())


@functools.cache
def _key_at(path: Path) -> bytes:
    """This user's key, made on first use: readable by this user only, and written whole or not at all (two
    processes making it at once agree on the one that landed first). Read once per process (each saved run's
    config is sealed, each resumed one checked)."""
    try:
        return bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_hex(32))
    try:
        os.link(draft, path)  # fails if another process's key landed first: that one is the key
    except FileExistsError:
        pass
    finally:
        draft.unlink()
    return bytes.fromhex(path.read_text().strip())


def _digest(run_id: str, config: dict[str, Any]) -> str:
    unsealed = {k: v for k, v in config.items() if k != SEAL_KEY}
    body = json.dumps([run_id, unsealed], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(_key(), body.encode(), hashlib.sha256).hexdigest()


def sealed(run_id: str, config: dict[str, Any]) -> dict[str, Any]:
    """`config` with its seal, bound to the run (a seal copied from another run does not fit)."""
    return {**config, SEAL_KEY: _digest(run_id, config)}


def holds(run_id: str, config: dict[str, Any]) -> bool:
    """Whether `config` is exactly what this user's toolwire saved for `run_id`."""
    seal = config.get(SEAL_KEY)
    return isinstance(seal, str) and hmac.compare_digest(seal, _digest(run_id, config))
