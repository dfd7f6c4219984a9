"""The user's memory at scale: a recall's and a write's time in a store of 100,000 entries.

Builds a store of `--entries` entries through the store's own `add` (SQLite in a temporary
folder by default; `--engine postgres` in the database of `--url`, or in a fresh database of
a server the script starts as the tests do, see tests/support/postgres.py), then times:

- **recall**: `search(query, 5, exclude_project=…)`, the call layer 1 makes for a stage's
  task header, for each of a few queries `--reps` times after one warm-up search: the median
  and p90, with how many entries each query's words are found in;
- **a write**: `add` of one more entry, `--writes` times;
- **the degenerate store**: the same number of entries, every one made of the same 25 words
  (the domain words among them), searched with the queries of domain words.

The entries' text is made up but shaped like text: 30 to 80 words each, drawn from a
vocabulary of 20,000 made-up words whose frequencies follow Zipf's law (the word of rank r
drawn in proportion to 1/r), with a few domain words (`warmup`, `learning`, `rate`, `mlp`…)
put into a given share of the entries each (`DOMAIN`). The vocabulary's most common words
stand for English's function words, which `entries.terms` leaves out of a query, so the
queries are made of domain words and words of middling frequency; entries come from 12
projects, and each search leaves one out.

    python benchmarks/memory.py [--entries 100000] [--engine sqlite|postgres] [--url URL]
                                [--reps 20] [--writes 50] [--quick] [--json OUT]

`--url` names a database the script may fill and clear: its memory table must be empty or
absent, and is dropped at the end.

Targets (issue 34): a recall over 100,000 entries ≤ 20 ms (median); writing an entry ≤ 5 ms
(median).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "tests"))

import _common as C  # noqa: E402

from lightscientist_jupyter.memory import MemoryStore, NewEntry  # noqa: E402
from lightscientist_jupyter.memory.entries import terms  # noqa: E402
from lightscientist_jupyter.memory.sqlite import SqliteMemory  # noqa: E402
from lightscientist_jupyter.vocab import MemoryKind  # noqa: E402

VOCABULARY = 20_000
PROJECTS = 12
HERE = "/home/me/project-0"
"""The project a search is made for (`exclude_project`): its own entries are left out."""
DOMAIN = {
    "learning": 0.06,
    "rate": 0.06,
    "loss": 0.08,
    "accuracy": 0.06,
    "batch": 0.05,
    "small": 0.04,
    "seed": 0.04,
    "schedule": 0.03,
    "optimizer": 0.03,
    "mlp": 0.03,
    "warmup": 0.02,
    "dropout": 0.02,
    "tokenizer": 0.01,
    "vocabulary": 0.01,
}
"""Each domain word and the share of the entries it is put into."""
QUERIES = (
    "Does learning-rate warmup help a small MLP?",
    "a warmup schedule for the optimizer",
    "dropout against the tokenizer's vocabulary",
)
"""Queries of domain words; `main` adds one of words of middling frequency."""
DEGENERATE_WORDS = 25
TARGET_RECALL_MS = 20.0
TARGET_WRITE_MS = 5.0


def vocabulary(rng: random.Random) -> list[str]:
    """`VOCABULARY` made-up words (letters only, none a domain word), the most common first."""
    syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "ve", "do", "zu", "fa", "gi"]
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choices(syllables, k=rng.randint(2, 4))))
    ordered = sorted(words - set(DOMAIN))[:VOCABULARY]
    rng.shuffle(ordered)
    return ordered


class Texts:
    """Entry texts shaped like text (see the module's docstring), the same for a seed."""

    def __init__(self, seed: int = 34):
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng)
        self.cum = list(itertools.accumulate(1 / rank for rank in range(1, VOCABULARY + 1)))

    def text(self) -> str:
        words = self.rng.choices(self.words, cum_weights=self.cum, k=self.rng.randint(30, 80))
        for word, share in DOMAIN.items():
            if self.rng.random() < share:
                words.insert(self.rng.randrange(len(words) + 1), word)
        return " ".join(words)

    def middling(self, n: int) -> str:
        """A query of `n` words of ranks 200 to 2,000 (each in about 0.3 to 3 % of entries)."""
        return " ".join(self.rng.sample(self.words[200:2000], n))

    def degenerate(self) -> str:
        """The same `DEGENERATE_WORDS` words (the domain words and the vocabulary's most
        common after them), shuffled."""
        same = [*DOMAIN, *self.words[: DEGENERATE_WORDS - len(DOMAIN)]]
        self.rng.shuffle(same)
        return " ".join(same)


def entry(n: int, text: str) -> NewEntry:
    return NewEntry(
        MemoryKind.LESSON if n % 3 else MemoryKind.FINDING,
        text,
        f"/home/me/project-{n % PROJECTS}",
        f"lesson:bench#{n}",
        stage="experiment.loop",
        visit=1 + n % 5,
        at=1.7e9 + n,
    )


def fill(store: MemoryStore, count: int, make: Callable[[], str]) -> float:
    """Add `count` entries of `make()`'s texts; the seconds it took."""
    began = time.perf_counter()
    for n in range(count):
        store.add(entry(n, make()))
    return time.perf_counter() - began


def timed_ms(call: Callable[[], object], reps: int) -> list[float]:
    call()  # warm: the pages it reads are in memory, as in a kernel that recalled before
    out = []
    for _ in range(reps):
        began = time.perf_counter()
        call()
        out.append((time.perf_counter() - began) * 1000)
    return out


def recall(store: MemoryStore, queries: list[str], reps: int, entries: int) -> dict[str, Any]:
    """Per query: the entries its words are found in (of the other projects) and the ms of
    `search(query, 5, exclude_project=HERE)`."""
    out = {}
    for query in queries:
        matched = len(store.search(query, entries, exclude_project=HERE))
        ms = timed_ms(lambda q=query: store.search(q, 5, exclude_project=HERE), reps)
        out[query] = {"terms": terms(query), "matched": matched, "ms": ms}
    return out


def size_of(store: MemoryStore, url: str | None) -> int:
    """The store's bytes: the SQLite file and its journal, or the PostgreSQL table with its
    indexes."""
    if isinstance(store, SqliteMemory):
        return sum(p.stat().st_size for p in store.path.parent.glob(store.path.name + "*"))
    import psycopg

    from lightscientist_jupyter.memory.postgres import TABLE

    with psycopg.connect(str(url)) as conn:
        found = conn.execute("SELECT pg_total_relation_size(%s)", (TABLE,)).fetchone()
    return int(found[0]) if found else 0


@contextlib.contextmanager
def fresh_store(engine: str, url: str | None, folder: Path, name: str) -> Iterator[MemoryStore]:
    """An empty store: a new SQLite file in `folder`, or the memory table of `url` (refused
    when it holds entries; dropped at the end)."""
    if engine == "sqlite":
        with SqliteMemory(folder / name / "memory.sqlite3") as store:
            yield store
        return
    import psycopg

    from lightscientist_jupyter.memory.postgres import TABLE, PostgresMemory

    assert url is not None
    with PostgresMemory(url) as store:
        if store.count():
            raise SystemExit(
                f"{store.where} holds a memory of {store.count():,} entries: give --url a "
                "database the benchmark may fill and clear"
            )
        try:
            yield store
        finally:
            store.close()
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"DROP TABLE IF EXISTS {TABLE}")


def summary(found: dict[str, Any]) -> list[list[Any]]:
    return [
        [
            query,
            " ".join(row["terms"]),
            C.fmt_int(row["matched"]),
            f"{C.median(row['ms']):.1f} ms",
            f"{C.percentile(row['ms'], 90):.1f} ms",
        ]
        for query, row in found.items()
    ]


def measure(args: argparse.Namespace, url: str | None, folder: Path) -> dict[str, Any]:
    texts = Texts()
    queries = [*QUERIES, texts.middling(4)]
    data: dict[str, Any] = {"engine": args.engine, "entries": args.entries}
    with fresh_store(args.engine, url, folder, "realistic") as store:
        data["build_s"] = fill(store, args.entries, texts.text)
        data["bytes"] = size_of(store, url)
        data["recall"] = recall(store, queries, args.reps, args.entries)
        more = iter(range(args.entries, args.entries + args.writes + 1))
        data["write_ms"] = timed_ms(lambda: store.add(entry(next(more), texts.text())), args.writes)
    with fresh_store(args.engine, url, folder, "degenerate") as store:
        data["degenerate_build_s"] = fill(store, args.entries, texts.degenerate)
        data["degenerate"] = recall(store, list(QUERIES), args.reps, args.entries)
    return data


def report_of(args: argparse.Namespace, data: dict[str, Any]) -> C.Report:
    report = C.Report("Memory")
    engine = "SQLite (FTS5, BM25)" if args.engine == "sqlite" else "PostgreSQL (ts_rank_cd)"
    report.say(
        f"{engine}: a store of {args.entries:,} entries ({C.fmt_bytes(data['bytes'])}) filed "
        f"one `add` at a time in {data['build_s']:.1f} s "
        f"({data['build_s'] / args.entries * 1000:.2f} ms an entry); entries of 30 to 80 words "
        f"from a Zipf-distributed vocabulary of {VOCABULARY:,} words and a few domain words, "
        f"from {PROJECTS} projects. Recall: `search(query, 5, exclude_project=…)`, "
        f"{args.reps} times a query after a warm-up."
    )
    headers = ["query", "its terms", "entries found in", "median", "p90"]
    report.table(headers, summary(data["recall"]))
    recall_ms = [ms for row in data["recall"].values() for ms in row["ms"]]
    write_ms = data["write_ms"]
    found = sum(row["matched"] for row in data["recall"].values())
    per_found = sum(C.median(row["ms"]) for row in data["recall"].values()) / max(found, 1)
    report.say(
        f"All queries: median {C.median(recall_ms):.1f} ms, p90 "
        f"{C.percentile(recall_ms, 90):.1f} ms; a search's time grows with the entries its "
        f"words are found in (about {per_found * 1000:.1f} µs each: every one is ranked). "
        f"Writing one entry (`add`, {len(write_ms)} times): median {C.median(write_ms):.2f} ms, "
        f"p90 {C.percentile(write_ms, 90):.2f} ms."
    )
    report.say(
        f"The degenerate store: {args.entries:,} entries, each the same {DEGENERATE_WORDS} "
        "words (shuffled), so every query's words are in every entry:"
    )
    report.table(headers, summary(data["degenerate"]))
    degenerate_ms = [ms for row in data["degenerate"].values() for ms in row["ms"]]
    ranker = "BM25" if args.engine == "sqlite" else "ts_rank_cd"
    report.say(
        f"Degenerate: median {C.median(degenerate_ms):.1f} ms against "
        f"{C.median(recall_ms):.1f} ms. Why it differs: the index finds the entries holding a "
        f"query's words, and only those are ranked; here the index narrows nothing, so "
        f"{ranker} scores all {args.entries:,} entries to keep the best 5. In text shaped like "
        "text, each of a query's words is in a small share of the entries (the "
        "'entries found in' column above)."
    )
    broadest = max(data["recall"].values(), key=lambda row: row["matched"])
    report.check(
        C.target(
            f"recall over {args.entries:,} entries (median)",
            f"{C.median(recall_ms):.1f} ms (p90 {C.percentile(recall_ms, 90):.1f} ms; the "
            f"broadest query, found in {broadest['matched']:,}: {C.median(broadest['ms']):.1f} ms)",
            f"≤ {TARGET_RECALL_MS:.0f} ms",
            value=C.median(recall_ms),
            limit=TARGET_RECALL_MS,
            higher=False,
            why=f"{ranker} scores every entry holding one of the query's words",
        )
    )
    report.check(
        C.target(
            "writing an entry (median)",
            f"{C.median(write_ms):.2f} ms (p90 {C.percentile(write_ms, 90):.2f} ms)",
            f"≤ {TARGET_WRITE_MS:.0f} ms",
            value=C.median(write_ms),
            limit=TARGET_WRITE_MS,
            higher=False,
            why="each `add` is a transaction of its own, flushed to disk",
        )
    )
    report.data = {**data, "recall_ms": recall_ms, "degenerate_ms": degenerate_ms}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000, help="entries in the store")
    parser.add_argument("--engine", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument(
        "--url", help="postgres: a database to fill and clear (default: a server of its own)"
    )
    parser.add_argument("--reps", type=int, default=20, help="searches of each query")
    parser.add_argument("--writes", type=int, default=50, help="entries added, one at a time")
    parser.add_argument(
        "--quick", action="store_true", help="tiny: 2,000 entries, 5 searches, 10 writes"
    )
    parser.add_argument("--json", help="write the results here (for run_all.py)")
    args = parser.parse_args(argv)
    if args.url and args.engine != "postgres":
        parser.error("--url goes with --engine postgres")
    if args.quick:
        args.entries, args.reps, args.writes = 2_000, 5, 10

    folder = Path(tempfile.mkdtemp(prefix="ls-bench-memory-"))
    try:
        with contextlib.ExitStack() as stack:
            url = args.url
            if args.engine == "postgres" and not url:
                from support.postgres import server_in_tmp

                server = stack.enter_context(server_in_tmp("ls-bench-memory-postgres-"))
                url = server.new_database()
                print(f"a PostgreSQL server of its own on 127.0.0.1:{server.port} (fsync off)")
            data = measure(args, url, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    report_of(args, data).write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
