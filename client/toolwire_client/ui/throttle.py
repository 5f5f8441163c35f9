"""Failed logins, counted per client address and per account, so that guessing is slow and one client's flood never
keeps another client out:

- a client with CLIENT_FAILURES failed logins in the last minute is refused, unchecked, until the oldest is a minute
  old;
- an account named in ACCOUNT_FAILURES failed logins in the last minute (from anywhere: many addresses guessing one
  person's token) is refused, unchecked, to every client that has itself failed in that minute; a client with no
  failure is still checked, so the person logs in from their own machine;
- a correct login is never a failure, and clears its client's failures; a refused attempt is not counted either (a
  correct retry does not prolong the wait).

Behind a reverse proxy every client has the proxy's address (X-Forwarded-For is not trusted): give each person their
own token, and the per-account count still holds."""

import time
from collections import deque

WINDOW_S = 60.0
CLIENT_FAILURES = 10
ACCOUNT_FAILURES = 10


class LoginThrottle:
    def __init__(self) -> None:
        self.clients: dict[str, deque[float]] = {}
        self.accounts: dict[str, deque[float]] = {}

    def refused(self, client: str, account: str | None) -> bool:
        """Whether this attempt is refused without checking its token."""
        now = time.monotonic()
        self._forget(now)
        mine = len(self.clients.get(client, ()))
        if mine >= CLIENT_FAILURES:
            return True
        return mine > 0 and account is not None and len(self.accounts.get(account, ())) >= ACCOUNT_FAILURES

    def failed(self, client: str, account: str | None) -> None:
        """A wrong token; `account` the person named, if it names one (an unknown name counts for the client only)."""
        now = time.monotonic()
        self.clients.setdefault(client, deque()).append(now)
        if account is not None:
            self.accounts.setdefault(account, deque()).append(now)

    def succeeded(self, client: str) -> None:
        self.clients.pop(client, None)

    def _forget(self, now: float) -> None:
        for counts in (self.clients, self.accounts):
            for key in list(counts):
                times = counts[key]
                while times and times[0] <= now - WINDOW_S:
                    times.popleft()
                if not times:
                    del counts[key]
