"""The MCP kit's restart policies (toolwire_shared/mcp_kit/restarts.py) as the Supervisor asks them: a run's own
server is restarted once, at once; a gateway's upstream for ever, its wait doubling to a cap and starting over after
a connection that stayed up (a crash loop keeps doubling)."""

from toolwire_shared.mcp_kit.restarts import Backoff, OnceOnly, Restart


def test_a_runs_own_server_is_restarted_once_then_given_up_with_a_reason() -> None:
    policy = OnceOnly(max_restarts=1)
    assert policy.next_restart("tool server 's'", 0, now=5.0, up_since=1.0) == Restart(0.0)
    assert policy.next_restart("tool server 's'", 1, now=9.0, up_since=6.0) == (
        "the tool server 's' stopped and was already restarted 1 time(s)"
    )


def test_an_upstream_backs_off_doubling_to_its_cap_and_starts_over_after_a_steady_run() -> None:
    policy = Backoff(first_s=0.5, max_s=2.0, steady_s=60.0)
    waits = [policy.next_restart("upstream u", n, now=10.0 * n, up_since=10.0 * n - 1) for n in range(4)]
    assert [w.wait_s for w in waits if isinstance(w, Restart)] == [0.5, 1.0, 2.0, 2.0]  # a crash loop: doubled
    steady = policy.next_restart("upstream u", 4, now=200.0, up_since=100.0)  # up 100 s: a fresh failure
    assert steady == Restart(0.5)
    never_up = policy.next_restart("upstream u", 5, now=300.0, up_since=float("inf"))  # it never connected
    assert never_up == Restart(1.0)
