"""One retry policy for every HTTP model adapter: what to retry, how long to wait, and when to give up.

Retried: 408, 409, 429, 5xx (529 included) and connection errors/timeouts, unless the server says
`x-should-retry: false`. Never retried: billing stops (OpenAI `insufficient_quota`, Anthropic
`enforced_spend_limit_reached`, 402), because waiting does not refill an account.
"""

import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

import anyio
import httpx2

from toolwire_client.models.base import ModelCallFailed
from toolwire_otel.spans import record_retry

RETRY_STATUSES = frozenset({408, 409, 429})
log = logging.getLogger("toolwire.client.retry")
"""A wait between attempts is said as it starts (a rate limit's retry-after can be a minute): a warning."""
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry. Tests pass a recording `sleep` so nothing really waits."""

    max_tries: int = 4
    """Total attempts, the first one included."""
    base_s: float = 0.5
    cap_s: float = 8.0
    """Cap on a backoff wait we choose ourselves (full jitter below it)."""
    max_wait_s: float = 60.0
    """Cap on a wait the server asks for with retry-after(-ms)."""
    sleep: Sleep = field(default=anyio.sleep, compare=False)
    uniform: Callable[[float, float], float] = field(default=random.uniform, compare=False)

    def backoff(self, retry_index: int) -> float:
        """Full jitter: anywhere between 0 and the exponential ceiling, so many clients do not retry in step."""
        return self.uniform(0.0, min(self.cap_s, self.base_s * 2**retry_index))

    def wait_for(self, retry_index: int, headers: httpx2.Headers | None) -> float:
        asked = retry_after_s(headers) if headers is not None else None
        if asked is not None:
            return min(max(asked, 0.0), self.max_wait_s)
        return self.backoff(retry_index)


def retry_after_s(headers: httpx2.Headers) -> float | None:
    """The wait the server asked for: `retry-after-ms`, then `retry-after` as seconds or as an HTTP date."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class Failure:
    """One failed attempt, described without secrets."""

    summary: str
    """e.g. '529 overloaded_error' or 'a connection error (ConnectError)'."""
    detail: str
    status: int | None
    retryable: bool
    billing: bool = False
    headers: httpx2.Headers | None = None


class AttemptFailed(Exception):
    """An attempt failed after its 200 began (an `error` event mid-stream, a stream cut short)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.summary)
        self.failure = failure


def error_fields(body: Any) -> tuple[str | None, str | None, str | None]:
    """(type, message, code) from either provider's error body; code is OpenAI's `code` or Anthropic's
    `details.error_code`. Some OpenAI-compatible servers (older vLLM) put the fields at the top level."""
    if not isinstance(body, dict):
        return None, None, None
    err: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else body
    if "message" not in err:
        return None, None, None
    details = err.get("details")
    code = err.get("code") or (details.get("error_code") if isinstance(details, dict) else None)
    kind, message = err.get("type"), err.get("message")
    return (
        str(kind) if kind is not None else None,
        str(message) if message is not None else None,
        str(code) if code is not None else None,
    )


BILLING_CODES = frozenset({"insufficient_quota", "enforced_spend_limit_reached"})


def classify_response(response: httpx2.Response) -> Failure:
    """Why a non-2xx response failed and whether trying again can help."""
    status = response.status_code
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    kind, message, code = error_fields(body)
    label = code if code in BILLING_CODES else (kind or code or response.reason_phrase or "error")
    summary = f"{status} {label}"
    detail = message or (response.text[:300] if body is None else "")
    billing = status == 402 or code in BILLING_CODES or kind == "billing_error"
    should = response.headers.get("x-should-retry", "").lower()
    if billing:
        retryable = False
    elif should in ("true", "false"):
        retryable = should == "true"
    else:
        retryable = status in RETRY_STATUSES or status >= 500
    return Failure(summary, detail, status, retryable, billing, response.headers)


def classify_transport(exc: httpx2.TransportError) -> Failure:
    what = "a timeout" if isinstance(exc, httpx2.TimeoutException) else "a connection error"
    return Failure(f"{what} ({type(exc).__name__})", str(exc), None, True)


def redact(text: str, secrets: Iterable[str | None]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return text


def give_up_reason(provider: str, failures: list[Failure]) -> str:
    last = failures[-1]
    tries = len(failures)
    said = f": {last.detail}" if last.detail else ""
    if last.billing:
        return f"{provider} returned {last.summary}{said}; a billing stop, not retried"
    if not last.retryable:
        return f"{provider} returned {last.summary}{said}; not retried"
    same = sum(1 for f in failures if f.summary == last.summary)
    times = "once" if same == 1 else f"{same} times"
    verb = "returned" if last.status is not None else "hit"
    last_said = f" (last error: {last.detail})" if last.detail else ""
    return f"{provider} {verb} {last.summary} {times}; gave up after {tries} tries{last_said}"


async def send_with_retries(
    provider: str,
    send: Callable[[], Awaitable[httpx2.Response]],
    policy: RetryPolicy,
    secrets: Iterable[str | None] = (),
    on_wait: Callable[[float], None] | None = None,
) -> httpx2.Response:
    """Send until a 2xx comes back; otherwise raise ModelCallFailed with a readable, key-free reason. Each wait
    before another try is logged as it starts and given to `on_wait` (its seconds)."""
    secret_list = list(secrets)
    failures: list[Failure] = []
    while True:
        try:
            response = await send()
        except httpx2.TransportError as exc:
            failure = classify_transport(exc)
        except AttemptFailed as exc:
            failure = exc.failure
        else:
            if response.is_success:
                return response
            failure = classify_response(response)
        failures.append(failure)
        if not failure.retryable or len(failures) >= policy.max_tries:
            raise ModelCallFailed(
                redact(give_up_reason(provider, failures), secret_list),
                status=failure.status,
                retryable=failure.retryable,
                attempts=len(failures),
            )
        wait_s = policy.wait_for(len(failures) - 1, failure.headers)
        record_retry(len(failures), redact(f"{provider}: {failure.summary}", secret_list), wait_s)
        asked = " (as it asked)" if failure.headers is not None and retry_after_s(failure.headers) is not None else ""
        said = f"{provider} {'returned' if failure.status is not None else 'hit'} {failure.summary}"
        tries = f"try {len(failures) + 1} of {policy.max_tries}"
        log.warning("%s; waiting %.1f s%s before %s", redact(said, secret_list), wait_s, asked, tries)
        if on_wait is not None:
            on_wait(wait_s)
        await policy.sleep(wait_s)
