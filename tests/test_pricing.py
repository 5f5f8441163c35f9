"""The price table: shipped data, user overrides, cache arithmetic, and no price for unknown models."""

from pathlib import Path

import pytest

from helpers.refusals import refusal
from toolwire_client.models.pricing import PRICES_ENV, Price, PriceFileError, PriceTable, cost, load_prices
from toolwire_shared.usage import Usage


def test_seed_arithmetic_at_3_and_15() -> None:
    table = PriceTable({"seed-model": Price(3.0, 15.0)})
    usage = Usage(input_tokens=49_750, output_tokens=1_500)
    assert table.cost("seed-model", usage) == pytest.approx(0.14925 + 0.0225)
    assert round(table.cost("seed-model", usage) or 0, 2) == 0.17


def test_shipped_table_knows_current_models_and_their_snapshots() -> None:
    table = load_prices()
    sonnet = table.lookup("claude-sonnet-4-5-20250929")
    assert sonnet == Price(3.0, 15.0, 0.30, 3.75, 6.0)
    assert table.lookup("anthropic:claude-haiku-4-5") == Price(1.0, 5.0, 0.10, 1.25, 2.0)
    assert table.lookup("openai/gpt-4o-mini-2024-07-18") == Price(0.15, 0.60, 0.075, 0.15)
    opus = Price(15.0, 75.0, 1.50, 18.75, 30.0)
    assert table.lookup("claude-opus-4-0") == opus and table.lookup("claude-opus-4-20250514") == opus
    # gpt-4o must not be priced as gpt-4o-mini or vice versa
    assert table.lookup("gpt-4o") == Price(2.50, 10.0, 1.25, 2.50)
    assert table.lookup("gpt-4o-mini") == Price(0.15, 0.60, 0.075, 0.15)


def test_unknown_model_has_tokens_but_no_cost() -> None:
    assert cost("scripted", Usage(input_tokens=1000, output_tokens=10)) is None
    # a model that merely starts like a known one is not priced as it
    assert load_prices().lookup("gpt-5-pro") is None
    assert load_prices().lookup("claude-sonnet-4-5-experimental") is None


def test_cached_tokens_are_billed_at_their_own_prices() -> None:
    price = Price(input=3.0, output=15.0, cache_read=0.30, cache_write=3.75)
    # 10,000 prompt tokens of which 6,000 read from cache and 2,000 written to it: 2,000 uncached
    usage = Usage(input_tokens=10_000, output_tokens=100, cache_read_tokens=6_000, cache_write_tokens=2_000)
    expected = (2_000 * 3.0 + 6_000 * 0.30 + 2_000 * 3.75 + 100 * 15.0) / 1_000_000
    assert price.cost(usage) == pytest.approx(expected)
    # without cache prices, cached tokens fall back to the input price
    assert Price(3.0, 15.0).cost(usage) == pytest.approx((10_000 * 3.0 + 100 * 15.0) / 1_000_000)


def test_user_file_overrides_and_extends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "prices.toml"
    file.write_text('[models."gpt-4o"]\ninput = 1.0\noutput = 2.0\n\n[models."local-llama"]\ninput = 0\noutput = 0\n')
    monkeypatch.setenv(PRICES_ENV, str(file))
    assert cost("gpt-4o", Usage(input_tokens=1_000_000)) == pytest.approx(1.0)
    assert cost("local-llama", Usage(input_tokens=5)) == 0.0
    assert cost("claude-haiku-4-5", Usage(output_tokens=1_000_000)) == pytest.approx(5.0)
    other = tmp_path / "more.toml"
    other.write_text('[models."gpt-4o"]\ninput = 7.0\noutput = 2.0\naliases = ["my-4o"]\n')
    assert load_prices(other).cost("my-4o", Usage(input_tokens=1_000_000)) == pytest.approx(7.0)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not toml = = 1", "not valid TOML"),
        ("[other]\nx = 1\n", "no [models"),
        ('[models."m"]\noutput = 1\n', "has no 'input' price"),
        ('[models."m"]\ninput = "3"\noutput = 1\n', "not a non-negative number"),
        ('[models."m"]\ninput = 3\noutput = 1\ncahce_read = 1\n', "unknown keys ['cahce_read']"),
    ],
)
def test_bad_price_file_says_what_is_wrong_and_shows_a_row(tmp_path: Path, text: str, says: str) -> None:
    file, message = refusal(tmp_path, text, load_prices, PriceFileError)
    assert says in message
    assert str(file) in message
    assert "input = 3.0" in message


def test_missing_price_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(PriceFileError, match="cannot read price file"):
        load_prices(tmp_path / "nope.toml")
