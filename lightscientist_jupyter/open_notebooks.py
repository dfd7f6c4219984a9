"""Notebooks a researcher has open in JupyterLab, and the changes the kernel side hands to
those pages instead of rewriting the file underneath them.

A worker's notebook tool that saved `experiment/analysis.ipynb` on disk while the researcher
had it open would leave JupyterLab holding an older copy: "File Changed" on the next save,
and with jupyter-collaboration the server reloads the file into the shared document and
drops what the researcher had typed. So the two sides meet through files of the project's
`.lightscientist/open/` folder, which sandboxed commands cannot see:

    pages/<page>.json        {"page", "seen", "paths"}: what one JupyterLab page has open
                             (project-relative paths), written by the server extension each
                             time the page reports (every 1–5 s)
    changes/<id>.json        {"id", "path", "base", "next", "by", "asked"}: a notebook's new
                             content and the content it was made from, by a kernel-side writer
    changes/<id>.taken       the same, once the server has handed it to a page
    changes/<id>.done.json   {"id", "outcome", "detail"}: what the page did with it

The page applies the change cell by cell to its open model (the researcher's unsaved edits
of other cells stay), saves it through JupyterLab and reports; the writer waits for that
report (`hand_to_pages`). A page that stops reporting while a change waits is taken to be
closed: the writer then writes the file itself, as when nothing has the notebook open.
Every file here is reached through the guarded path.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal, TypedDict, cast

from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.workspace import STATE_DIR

OPEN_DIR = f"{STATE_DIR}/open"
PAGES_DIR = f"{OPEN_DIR}/pages"
CHANGES_DIR = f"{OPEN_DIR}/changes"

LIVE_S = 15.0
"""A page whose last report is older than this is closed (it reports every 1–5 s, every
5 s while hidden, and a busy server or browser tab may be late by a few seconds)."""
WAIT_S = 20.0
"""How long a writer waits for a live page to take its change, then as long again for the
page's report once it has taken it."""
POLL_S = 0.05
FORGET_S = 3600.0
"""A closed page's report file is removed after this long."""

_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

Outcome = Literal["saved", "conflict", "failed"]
"""What a page did with a change: applied and saved it; refused it because the researcher
changed one of its cells too and has not saved (the detail names the cells); failed."""
OUTCOMES: tuple[Outcome, ...] = ("saved", "conflict", "failed")


class PageReport(TypedDict):
    page: str
    seen: float
    paths: list[str]


class Change(TypedDict):
    id: str
    path: str
    base: str | None
    next: str
    by: str
    asked: float


class Settled(TypedDict):
    id: str
    outcome: Outcome
    detail: str


@dataclass(frozen=True)
class Handed:
    """How a change handed to the pages ended: one of `OUTCOMES`, or "closed" (no page has
    the notebook open any more and none took the change: write the file) or "silent" (a
    page took it, or has the notebook open, and did not answer in time: nothing written)."""

    outcome: Outcome | Literal["closed", "silent"]
    detail: str = ""


def valid_id(text: object, what: str) -> str:
    """`text` when it can name a file here (letters, digits, '-', '_'), else ValueError."""
    if not isinstance(text, str) or not _ID.match(text):
        raise ValueError(f"{what} must be 1–64 letters, digits, '-' or '_'")
    return text


# ------------------------------------------------------------------ the writer's side


def pages_with(tree: Beneath, rel: str | PurePosixPath, now: float | None = None) -> list[str]:
    """The live pages that have the notebook `rel` (project-relative) open."""
    now = time.time() if now is None else now
    wanted = PurePosixPath(rel).as_posix()
    return [
        report["page"]
        for report in _reports(tree)
        if now - report["seen"] <= LIVE_S and wanted in report["paths"]
    ]


def hand_to_pages(
    tree: Beneath,
    rel: str | PurePosixPath,
    base: str | None,
    next_text: str,
    by: str,
    wait_s: float | None = None,
) -> Handed:
    """Hand the notebook `rel`'s new content `next_text` (made from `base`, the file's text
    when it was read) to the pages that have it open, and wait for the one that takes it
    (`WAIT_S` unless `wait_s` is given)."""
    wait_s = WAIT_S if wait_s is None else wait_s
    path = PurePosixPath(rel).as_posix()
    change_id = uuid.uuid4().hex
    asked, taken = f"{CHANGES_DIR}/{change_id}.json", f"{CHANGES_DIR}/{change_id}.taken"
    done = f"{CHANGES_DIR}/{change_id}.done.json"
    change: Change = {
        "id": change_id,
        "path": path,
        "base": base,
        "next": next_text,
        "by": by,
        "asked": time.time(),
    }
    tree.makedirs(CHANGES_DIR, mode=0o700)
    tree.write_text_atomic(asked, json.dumps(change, ensure_ascii=False), mode=0o600, durable=False)
    deadline = time.monotonic() + wait_s
    try:
        while True:
            settled = _settled(tree, done)
            if settled is not None:
                return Handed(settled["outcome"], settled["detail"])
            waiting = tree.lstat(asked) is not None
            if waiting and (not pages_with(tree, path) or time.monotonic() > deadline):
                if _withdraw(tree, asked):
                    return Handed("closed" if not pages_with(tree, path) else "silent")
                continue  # a page took it in this very moment: wait for its report
            if not waiting and time.monotonic() > deadline + wait_s:
                return Handed("silent", "the page took the change and did not report")
            time.sleep(POLL_S)
    finally:
        for name in (asked, taken, done):
            tree.unlink(name)


def _withdraw(tree: Beneath, asked: str) -> bool:
    """Take back a change no page has taken; False when a page took it first."""
    try:
        tree.replace(asked, f"{asked}.withdrawn")
    except FileNotFoundError:
        return False
    tree.unlink(f"{asked}.withdrawn")
    return True


def _settled(tree: Beneath, done: str) -> Settled | None:
    try:
        data = json.loads(tree.read_text(done))
    except (FileNotFoundError, ValueError):
        return None
    outcome = data.get("outcome") if isinstance(data, dict) else None
    if outcome not in OUTCOMES:
        return Settled(id="", outcome="failed", detail=f"an unreadable report: {data!r:.200}")
    return cast(Settled, data)


# ------------------------------------------------------------------ the server's side


def report_pages(tree: Beneath, page: str, paths: Iterable[str], now: float | None = None) -> None:
    """Keep what the page `page` has open in this project (project-relative notebook paths;
    none when it closed them all). Removes reports of pages closed long ago."""
    now = time.time() if now is None else now
    valid_id(page, "the page id")
    tree.makedirs(PAGES_DIR, mode=0o700)
    report: PageReport = {"page": page, "seen": now, "paths": sorted(set(paths))}
    tree.write_text_atomic(
        f"{PAGES_DIR}/{page}.json", json.dumps(report, ensure_ascii=False), durable=False
    )
    for old in _reports(tree):
        if now - old["seen"] > FORGET_S:
            tree.unlink(f"{PAGES_DIR}/{old['page']}.json")


def take_changes(tree: Beneath, paths: Iterable[str]) -> list[Change]:
    """The changes that wait for one of `paths` (project-relative), oldest first, each now
    taken by the caller's page: no other page gets it."""
    wanted = set(paths)
    found: list[Change] = []
    for entry in _entries(tree, CHANGES_DIR):
        name = entry.name
        if not name.endswith(".json") or name.endswith(".done.json"):
            continue
        change_id = name.removesuffix(".json")
        try:
            change = json.loads(tree.read_text(f"{CHANGES_DIR}/{name}"))
        except (FileNotFoundError, ValueError, PathRefused):
            continue
        if not isinstance(change, dict) or change.get("path") not in wanted:
            continue
        try:
            tree.replace(f"{CHANGES_DIR}/{name}", f"{CHANGES_DIR}/{change_id}.taken")
        except FileNotFoundError:  # withdrawn or taken by another page meanwhile
            continue
        found.append(cast(Change, change))
    return sorted(found, key=lambda change: change["asked"])


def settle(tree: Beneath, change_id: str, outcome: str, detail: str) -> None:
    """Report what a page did with the change `change_id` it took; KeyError when no change
    of that id waits for a report (its writer gave up, or it was never taken)."""
    valid_id(change_id, "the change id")
    if outcome not in OUTCOMES:
        raise ValueError(f"the outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
    taken = f"{CHANGES_DIR}/{change_id}.taken"
    if tree.lstat(taken) is None:
        raise KeyError(change_id)
    settled: Settled = {"id": change_id, "outcome": outcome, "detail": detail}
    tree.write_text_atomic(
        f"{CHANGES_DIR}/{change_id}.done.json", json.dumps(settled), mode=0o600, durable=False
    )


# ------------------------------------------------------------------ reading


def _entries(tree: Beneath, folder: str) -> list[os.DirEntry[str]]:
    try:
        return tree.scandir(folder)
    except (FileNotFoundError, NotADirectoryError, PathRefused):
        return []


def _reports(tree: Beneath) -> list[PageReport]:
    reports = []
    for entry in _entries(tree, PAGES_DIR):
        if not entry.name.endswith(".json"):
            continue
        try:
            data = json.loads(tree.read_text(f"{PAGES_DIR}/{entry.name}"))
        except (FileNotFoundError, ValueError, PathRefused):
            continue
        if (
            isinstance(data, dict)
            and isinstance(data.get("page"), str)
            and isinstance(data.get("seen"), int | float)
            and isinstance(data.get("paths"), list)
        ):
            reports.append(cast(PageReport, data))
    return reports
