"""What a model call costs in USD, from a price table shipped as data and overridable by the user.

Unknown models cost None (tokens are still counted): a guessed price would be worse than none.
"""

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from toolwire_shared.usage import Usage

PRICES_ENV = "TOOLWIRE_PRICES"
"""Path of a TOML file whose rows replace or add to the shipped table."""

_PER_MILLION = 1_000_000
_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")
_EXAMPLE = '[models."my-model"]\ninput = 3.0\noutput = 15.0\ncache_read = 0.3\ncache_write = 3.75\ncache_write_1h = 6.0'


_PRICE_KEYS = ("input", "output", "cache_read", "cache_write", "cache_write_1h")


class PriceFileError(ValueError):
    """A price file could not be read; the message names the file, the row, and shows a correct row."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    cache_write_1h: float | None = None
    """1-hour cache writes; unset, they cost what a 5-minute write does."""

    def cost(self, usage: Usage) -> float:
        """Bill the uncached part of the prompt at the input price and the cached parts at theirs.

        Usage.input_tokens already includes cache reads and writes (see toolwire_shared.usage).
        """
        cache_read = self.input if self.cache_read is None else self.cache_read
        cache_write = self.input if self.cache_write is None else self.cache_write
        cache_write_1h = cache_write if self.cache_write_1h is None else self.cache_write_1h
        uncached = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
        written_1h = min(usage.cache_write_1h_tokens, usage.cache_write_tokens)
        total = (
            uncached * self.input
            + usage.cache_read_tokens * cache_read
            + (usage.cache_write_tokens - written_1h) * cache_write
            + written_1h * cache_write_1h
            + usage.output_tokens * self.output
        )
        return total / _PER_MILLION


class PriceTable:
    """Model name -> Price, with aliases, dated snapshot ids and provider prefixes resolved."""

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self._prices: dict[str, Price] = {}
        for name, price in (prices or {}).items():
            self._prices[name.lower()] = price

    def with_prices(self, prices: Mapping[str, Price]) -> "PriceTable":
        """A copy with these rows added or replaced (how a caller overrides one model's price)."""
        merged = PriceTable(self._prices)
        for name, price in prices.items():
            merged._prices[name.lower()] = price
        return merged

    def lookup(self, model: str) -> Price | None:
        name = model.strip().lower()
        for sep in (":", "/"):
            if sep in name:
                name = name.rsplit(sep, 1)[1]
        if name in self._prices:
            return self._prices[name]
        undated = _SUFFIX.sub("", name)
        return self._prices.get(undated)

    def cost(self, model: str, usage: Usage) -> float | None:
        price = self.lookup(model)
        return None if price is None else price.cost(usage)

    def models(self) -> list[str]:
        return sorted(self._prices)


def parse_prices(text: str, source: str) -> dict[str, Price]:
    """Rows of a price TOML file; raises PriceFileError saying what is wrong and what a correct row looks like."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PriceFileError(f"{source} is not valid TOML ({exc}). A price row looks like:\n{_EXAMPLE}") from exc
    models = data.get("models")
    if not isinstance(models, dict):
        raise PriceFileError(f'{source} has no [models."NAME"] tables. A price row looks like:\n{_EXAMPLE}')
    rows: dict[str, Price] = {}
    for name, row in models.items():
        price = _parse_row(name, row, source)
        rows[name] = price
        for alias in row.get("aliases", []):
            rows[str(alias)] = price
    return rows


def _parse_row(name: str, row: Any, source: str) -> Price:
    def bad(problem: str) -> PriceFileError:
        return PriceFileError(f"{source}: model '{name}' {problem}. A price row looks like:\n{_EXAMPLE}")

    if not isinstance(row, dict):
        raise bad("is not a table")
    values: dict[str, float | None] = {}
    for key in _PRICE_KEYS:
        value = row.get(key)
        if value is None and key in ("input", "output"):
            raise bad(f"has no '{key}' price")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value < 0):
            raise bad(f"has '{key}' = {value!r}, which is not a non-negative number of USD per million tokens")
        values[key] = None if value is None else float(value)
    unknown = set(row) - {*_PRICE_KEYS, "aliases"}
    if unknown:
        raise bad(f"has unknown keys {sorted(unknown)}")
    aliases = row.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise bad("has 'aliases' that is not a list of strings")
    input_price, output_price = values["input"], values["output"]
    assert input_price is not None and output_price is not None
    return Price(input_price, output_price, values["cache_read"], values["cache_write"], values["cache_write_1h"])


def shipped_prices() -> dict[str, Price]:
    text = resources.files("toolwire_client.models").joinpath("prices.toml").read_text(encoding="utf-8")
    return parse_prices(text, "toolwire_client/models/prices.toml")


def load_prices(path: str | Path | None = None) -> PriceTable:
    """The shipped table, then the file named by TOOLWIRE_PRICES, then `path`, each overriding the one before."""
    rows = shipped_prices()
    for extra in (os.environ.get(PRICES_ENV), path):
        if extra:
            file = Path(extra)
            try:
                text = file.read_text(encoding="utf-8")
            except OSError as exc:
                raise PriceFileError(f"cannot read price file {file}: {exc.strerror or exc}") from exc
            rows.update(parse_prices(text, str(file)))
    return PriceTable(rows)


@lru_cache(maxsize=4)
def _default_table(env_value: str | None) -> PriceTable:
    return load_prices()


def default_prices() -> PriceTable:
    """The table for this process (re-read when TOOLWIRE_PRICES changes)."""
    return _default_table(os.environ.get(PRICES_ENV))


def cost(model: str, usage: Usage, prices: PriceTable | None = None) -> float | None:
    """USD for one call's usage, or None when the model has no known price."""
    return (prices or default_prices()).cost(model, usage)
