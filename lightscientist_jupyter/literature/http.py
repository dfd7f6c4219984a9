"""Polite HTTP for the literature sources: a rate limit, retries with backoff, a breaker, and
bounds on how long and how large an answer may be.

One `Fetcher` per source and stage. It waits `interval` seconds between its requests, retries
a 429, a 5xx or a connection failure up to `retries` times (waiting `backoff·2^n` seconds, or
what `Retry-After` asks, at most `MAX_WAIT`), and after `threshold` requests in a row that
failed for good it opens its breaker: later requests fail at once with `SourceDown` until the
stage ends (a new stage gets new fetchers). Headers (an API key) never appear in an error.

Each request is bounded (`Bounds`): by a deadline, from its first try to its answer, retries
and waits included — a socket's timeout bounds each read, not the whole, so a server that
trickles a byte at a time would hold a worker for ever; each try reads in a thread of its own,
and the request gives up when the deadline passes — and by a size cap, enforced while the
answer streams in (a declared length above it is refused before any of the body is read), so
an answer is never held whole above the cap.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

MAX_WAIT = 10.0
USER_AGENT = "LightScientist-for-Jupyter (literature tools)"
CHUNK = 64 * 1024


@dataclasses.dataclass(frozen=True)
class Bounds:
    """What one request to a source may take (see the module's docstring)."""

    deadline: float = 30.0
    """Seconds from the first try to the answer, retries and waits included."""
    max_bytes: int = 16_000_000
    """The largest answer read, in bytes."""


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
        bounds: Bounds = Bounds(),
    ):
        self.name = name
        self.interval = interval
        self.retries = retries
        self.backoff = backoff
        self.threshold = threshold
        self.timeout = timeout
        """Seconds each connection or read may wait (the deadline bounds the whole)."""
        self.headers = {"User-Agent": USER_AGENT, **(headers or {})}
        self.bounds = bounds
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
        ends = time.monotonic() + self.bounds.deadline
        if not self._lock.acquire(timeout=self.bounds.deadline):  # another worker's request
            raise self._late()
        try:
            body = self._get(full, ends)
        except NotFound:
            raise
        except SourceError:
            self.failures += 1
            raise
        finally:
            self._lock.release()
        self.failures = 0
        return body

    def _get(self, url: str, ends: float) -> bytes:
        problem = ""
        for attempt in range(self.retries + 1):
            self._sleep(self._last + self.interval - time.monotonic(), ends)
            self._last = time.monotonic()
            self.requests += 1
            retry_after = None
            try:
                return self._fetch(url, ends)
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
                self._sleep(min(MAX_WAIT, delay), ends)
        raise SourceError(f"{self.name} failed after {self.retries + 1} tries: {problem}")

    def _sleep(self, seconds: float, ends: float) -> None:
        """Wait `seconds` (if above 0), unless that passes the deadline: then give up now."""
        if seconds <= 0:
            return
        if time.monotonic() + seconds >= ends:
            raise self._late()
        time.sleep(seconds)

    def _fetch(self, url: str, ends: float) -> bytes:
        """One try: the body, read by `_read` in a thread of its own (see the module's
        docstring); the try gives up when the deadline passes, and the thread stops at its
        next read or its socket's timeout."""
        left = ends - time.monotonic()
        if left <= 0:
            raise self._late()
        request = urllib.request.Request(url, headers=self.headers)
        outcome: queue.Queue[bytes | BaseException] = queue.Queue()
        stop = threading.Event()
        threading.Thread(
            target=self._read,
            args=(request, min(self.timeout, left), stop, outcome),
            name=f"literature-{self.name}",
            daemon=True,
        ).start()
        try:
            found = outcome.get(timeout=left)
        except queue.Empty:
            stop.set()
            raise self._late() from None
        if isinstance(found, BaseException):
            raise found
        return found

    def _read(
        self,
        request: urllib.request.Request,
        timeout: float,
        stop: threading.Event,
        outcome: queue.Queue[bytes | BaseException],
    ) -> None:
        cap = self.bounds.max_bytes
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                declared = str(answer.headers.get("Content-Length") or "")
                if declared.isdigit() and int(declared) > cap:
                    raise self._too_large()
                body = bytearray()
                while not stop.is_set():
                    chunk = answer.read1(CHUNK)
                    if not chunk:
                        break
                    body += chunk
                    if len(body) > cap:
                        raise self._too_large()
            outcome.put(bytes(body))
        except BaseException as exc:  # handed to the caller's thread, which raises it
            if isinstance(exc, urllib.error.HTTPError):
                exc.close()  # its body is not read: the status and headers say it all
            outcome.put(exc)

    def _late(self) -> SourceError:
        return SourceError(
            f"{self.name} did not answer within {self.bounds.deadline:g} s, the literature "
            "deadline ([literature] deadline or LIGHTSCIENTIST_LITERATURE_DEADLINE)"
        )

    def _too_large(self) -> SourceError:
        return SourceError(
            f"{self.name} answered more than {_shown(self.bounds.max_bytes)}, the literature "
            "size cap ([literature] max_bytes or LIGHTSCIENTIST_LITERATURE_MAX_BYTES); the "
            "rest was not read"
        )


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def _shown(size: int) -> str:
    return f"{size / 1e6:g} MB" if size >= 1_000_000 else f"{size:,} bytes"
