"""The Host/Origin rule itself (server/toolwire_server/transports/host_origin.py), without a server: the edges a real
request seldom shows (IPv6, ports, wildcards, case, malformed values, the option values the CLI accepts)."""

import pytest

from toolwire_server.transports.host_origin import HostOriginRule, check_allowed_host, check_allowed_origin

LOOPBACK = HostOriginRule("127.0.0.1", 8000)
ALLOWING = HostOriginRule(
    "127.0.0.1", 8000, ["Tools.Example.com", "api.example:*"], ["https://app.example.com", "http://dev.example:*"]
)


def status(rule: HostOriginRule, host: str | None, origin: str | None = None) -> int:
    refusal = rule.check(host, origin, ("127.0.0.1", 8000))
    return 200 if refusal is None else refusal.status


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "LOCALHOST:8000", "localhost", "[::1]:8000", "127.0.0.1:9999"])
def test_loopback_names_are_answered_on_any_port(host: str) -> None:
    assert status(LOOPBACK, host) == 200


@pytest.mark.parametrize(
    "host", [None, "evil.example:8000", "evil.example", "::1", "127.0.0.1:x", "127.0.0.1:*", "a b", "0.0.0.0:8000"]
)
def test_other_or_malformed_hosts_get_421(host: str | None) -> None:
    assert status(LOOPBACK, host) == 421


def test_allowed_hosts_are_exact_or_any_port() -> None:
    assert status(ALLOWING, "tools.example.com") == 200
    assert status(ALLOWING, "tools.example.com:8443") == 421
    assert status(ALLOWING, "api.example:1") == status(ALLOWING, "api.example") == 200
    assert status(ALLOWING, "api.example.evil:1") == 421


@pytest.mark.parametrize(
    ("origin", "expected"),
    [
        (None, 200),
        ("", 200),
        ("http://127.0.0.1:8000", 200),
        ("https://localhost:8000", 200),
        ("http://localhost:3000", 403),  # another program on this machine is another site
        ("http://localhost", 403),
        ("null", 403),
        ("http://evil.example:8000", 403),
        ("file://127.0.0.1:8000", 403),
    ],
)
def test_origin_must_be_a_page_of_this_server(origin: str | None, expected: int) -> None:
    assert status(LOOPBACK, "127.0.0.1:8000", origin) == expected


def test_allowed_origins_and_allowed_hosts_pages() -> None:
    assert status(ALLOWING, "127.0.0.1:8000", "https://app.example.com/") == 200
    assert status(ALLOWING, "127.0.0.1:8000", "http://dev.example:5173") == 200
    assert status(ALLOWING, "127.0.0.1:8000", "https://tools.example.com") == 200  # a page of an allowed host
    assert status(ALLOWING, "127.0.0.1:8000", "http://app.example.com") == 403


def test_origin_on_the_default_port_of_its_scheme() -> None:
    assert HostOriginRule("127.0.0.1", 80).check("localhost", "http://localhost") is None


def test_a_wildcard_bind_answers_the_address_the_connection_arrived_at() -> None:
    rule = HostOriginRule("0.0.0.0", 8000)
    assert rule.check("10.1.2.3:8000", None, ("10.1.2.3", 8000)) is None
    assert rule.check("10.1.2.3:8000", None, ("127.0.0.1", 8000)) is not None
    assert HostOriginRule("10.1.2.3", 8000).check("10.1.2.3:8000", None) is None


def test_port_none_is_the_port_the_connection_arrived_at() -> None:
    rule = HostOriginRule("127.0.0.1", None)
    assert rule.check("127.0.0.1:4321", "http://127.0.0.1:4321", ("127.0.0.1", 4321)) is None
    assert rule.check("127.0.0.1:4321", "http://127.0.0.1:4321", ("127.0.0.1", 1234)) is not None


def test_refusals_name_the_option_that_allows_them() -> None:
    host = LOOPBACK.check("Evil.Example:8000", None)
    assert host is not None and "'--allowed-host evil.example:8000'" in host.message
    assert "'--allowed-host evil.example:*'" in host.message
    origin = LOOPBACK.check("127.0.0.1:8000", "https://evil.example")
    assert origin is not None and "'--allowed-origin https://evil.example'" in origin.message


@pytest.mark.parametrize("value", ["http://x.example", "x.example/path", "", "x y", "[::1"])
def test_allowed_host_values_are_checked(value: str) -> None:
    with pytest.raises(ValueError, match="not a Host header value"):
        check_allowed_host(value)


@pytest.mark.parametrize("value", ["null", "app.example.com", "https://app.example.com/path", "https://"])
def test_allowed_origin_values_are_checked(value: str) -> None:
    with pytest.raises(ValueError):
        check_allowed_origin(value)
