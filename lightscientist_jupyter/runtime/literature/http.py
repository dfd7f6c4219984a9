"""Polite HTTP for the literature sources: a rate limit, retries with backoff, a breaker.

One `Fetcher` per source and stage. It waits `interval` seconds between its requests, retries
a 429, a 5xx or a connection failure up to `retries` times (waiting `backoff·2^n` seconds, or
what `Retry-After` asks, at most `MAX_WAIT`), and after `threshold` requests in a row that
failed for good it opens its breaker: later requests fail at once with `SourceDown` until the
stage ends (a new stage gets new fetchers). Headers (an API key) never appear in an error.
"""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.parse
import urllib.request

MAX_WAIT = 10.0
USER_AGENT = "LightScientist-for-Jupyter (literature tools)"


class SourceError(Exception):
    """A request that failed for good; the message names the source and what happened."""


class NotFound(SourceError):
    """The source answered 404: it does not know what was asked (not a failure)."""


class SourceDown(SourceError):
    """The source's breaker is open: it is not asked again in this stage."""


class Fetcher:
    """GETs for one source (see the module's docstring)."""

    def __init__(
        self,
        name: str,
        *,
        interval: float = 1.0,
        retries: int = 3,
        backoff: float = 1.0,
        threshold: int = 2,
        timeout: float = 20.0,
        headers: dict[str, str] | None = None,
    ):
        self.name = name
        self.interval = interval
        self.retries = retries
        self.backoff = backoff
        self.threshold = threshold
        self.timeout = timeout
        self.headers = {"User-Agent": USER_AGENT, **(headers or {})}
        self.failures = 0
        self.requests = 0
        self._last = 0.0
        self._lock = threading.Lock()

    @property
    def down(self) -> bool:
        return self.failures >= self.threshold

    def get(self, url: str, params: dict[str, str | int] | None = None) -> bytes:
        """The body of a 200 answer to `url?params`; raises `SourceError` / `SourceDown`."""
        if self.down:
            raise SourceDown(
                f"{self.name} is not asked again in this stage: its last {self.failures} "
                "requests failed (circuit breaker open)"
            )
        full = url + ("?" + urllib.parse.urlencode(params) if params else "")
        with self._lock:
            try:
                body = self._get(full)
            except NotFound:
                raise
            except SourceError:
                self.failures += 1
                raise
            self.failures = 0
            return body

    def _get(self, url: str) -> bytes:
        problem = ""
        for attempt in range(self.retries + 1):
            wait = self._last + self.interval - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self._last = time.monotonic()
            self.requests += 1
            retry_after = None
            try:
                request = urllib.request.Request(url, headers=self.headers)
                with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                    return answer.read()
            except urllib.error.HTTPError as exc:
                problem = f"HTTP {exc.code}"
                if exc.code == 404:
                    raise NotFound(f"{self.name} answered HTTP 404 (not found)") from None
                if exc.code != 429 and exc.code < 500:
                    raise SourceError(f"{self.name} answered {problem}") from None
                retry_after = _seconds(exc.headers.get("Retry-After"))
            except (urllib.error.URLError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                problem = f"cannot connect ({reason})"
            if attempt < self.retries:
                delay = retry_after if retry_after is not None else self.backoff * 2**attempt
                time.sleep(min(MAX_WAIT, delay))
        raise SourceError(f"{self.name} failed after {self.retries + 1} tries: {problem}")


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None
