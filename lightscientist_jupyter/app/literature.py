"""`check`: the provenance report of documents, one operation for every front door.

Each document is checked both ways: every citation to the record it came from, every decimal
number to the result file that holds it (see `controller.provenance`).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller import checks
from lightscientist_jupyter.controller.provenance import Item
from lightscientist_jupyter.controller.state import PendingDecision
from lightscientist_jupyter.controller.table import StageTable
from lightscientist_jupyter.errors import BadInput, LiteratureError
from lightscientist_jupyter.literature.config import (
    BOUND_KEYS,
    LiteratureConfig,
    environment_bounds,
    save,
)

DEFAULT_DOCUMENTS = ("paper/paper.tex", "paper/paper.md")
"""The paper `check` reads when given none: the first of these the workspace holds (the
default table's LaTeX source, or a Markdown paper of an older project)."""


@dataclasses.dataclass(frozen=True)
class CheckReport:
    sections: tuple[tuple[str, tuple[Item, ...]], ...]
    """(`citations:DOC` / `numbers:DOC`, its items) per check."""

    @property
    def ok(self) -> bool:
        return all(i.ok for _, items in self.sections for i in items)

    @property
    def problems(self) -> list[str]:
        return [
            f"{name}: {i.what} -> {i.trace}"
            for name, items in self.sections
            for i in items
            if not i.ok
        ]

    def lines(self) -> list[str]:
        out = []
        for name, items in self.sections:
            bad = sum(not i.ok for i in items)
            out.append(f"{name}: {len(items)} item(s), {bad} unresolved")
            out += [f"  {i.line()}" for i in items]
        out.append("all resolved" if self.ok else f"{len(self.problems)} unresolved: fix each")
        return out


def check(root: Path, documents: list[str], results: list[str] | None = None) -> CheckReport:
    """Run `citations` and `numbers` on each document (workspace-relative paths)."""
    folders = ",".join(results or [])
    sections = []
    tree = Beneath(root)
    default = next((d for d in DEFAULT_DOCUMENTS if tree.is_file(d)), DEFAULT_DOCUMENTS[0])
    for doc in documents or [default]:
        path = Path(doc)
        if path.is_absolute():
            try:
                doc = path.resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                raise BadInput(f"{doc} is not inside the workspace {root}") from None
        for kind in checks.KINDS:
            spec = f"{kind}:{doc}" + (f":{folders}" if kind == "numbers" and folders else "")
            try:
                sections.append((spec, tuple(checks.report(spec, root))))
            except ValueError as exc:
                raise BadInput(str(exc)) from None
    return CheckReport(tuple(sections))


def check_library(library: list[str] | None) -> None:
    """`--library` paths must exist, and the environment's literature bounds be valid
    (checked before a project writes anything)."""
    missing = [p for p in library or [] if not Path(p).expanduser().exists()]
    if missing:
        raise BadInput(f"--library {missing[0]} does not exist (a .bib, .json or a folder)")
    try:
        environment_bounds()
    except LiteratureError as exc:
        raise BadInput(str(exc)) from None


def configure(root: Path, table: StageTable, library: list[str] | None = None) -> None:
    """Write the workspace's literature settings (read by the workers' tools and by `check`):
    `--library` paths, else the table's `[literature]` library, else what they were (so a
    resume keeps them); a missing library is a `BadInput` naming it."""
    check_library(library)
    if not (library or table.literature):
        return
    before = LiteratureConfig.load(root, env=False)
    paths = list(library or table.literature.get("library") or [str(p) for p in before.library])
    refs = table.literature.get("references")
    bounds = {k: v for k, v in table.literature.items() if k in BOUND_KEYS}
    save(root, paths, refs if isinstance(refs, str) else None, bounds)


def gate_specs(table: StageTable, pending: PendingDecision | None) -> tuple[str, ...]:
    """The `numbers:` checks of the stage a pending gate approves (none otherwise)."""
    if pending is None or pending.kind != "gate" or pending.stage not in table:
        return ()
    return tuple(s for s in table[pending.stage].checks if s.startswith("numbers:"))


Sections = list[tuple[str, list[Item]]]
_KEPT: dict[tuple[str, str], tuple[tuple[Any, ...], Sections]] = {}
"""The sections last given for a (workspace, pending gate), with the files' stamp they read."""
_KEPT_MAX = 16
_KEPT_LOCK = threading.Lock()


def gate_sections(root: Path, table: StageTable, pending: PendingDecision | None) -> Sections:
    """Each `numbers:` check of the stage a pending gate approves, with its items (none at no
    such gate). Raises LightScientistError or OSError when a check cannot run.

    The side panel asks every 2 s while a gate waits, and a check parses the paper and every
    result file (a notebook is validated): what was found is kept for the gate and given
    again while the files it read are unchanged (their sizes and times)."""
    specs = gate_specs(table, pending)
    if not specs or pending is None:
        return []
    key, stamp = (str(root), pending.id), _stamp(root, specs)
    with _KEPT_LOCK:
        kept = _KEPT.get(key)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    sections = [(spec, checks.report(spec, root)) for spec in specs]
    with _KEPT_LOCK:
        if len(_KEPT) >= _KEPT_MAX:
            _KEPT.pop(next(iter(_KEPT)))
        _KEPT[key] = (stamp, sections)
    return sections


def _stamp(root: Path, specs: Sequence[str]) -> tuple[Any, ...]:
    """The size and time of every file the checks `specs` read (a path that cannot be
    looked at is stamped as such)."""
    tree = Beneath(root)
    marks: list[tuple[str, tuple[int, int] | None]] = []
    for spec in specs:
        _, doc, folders = checks.parse(spec)
        for name in [doc, *folders]:
            try:
                found: list[tuple[PurePosixPath, os.stat_result | None]] = (
                    list(tree.walk(name))
                    if tree.is_dir(name)
                    else [(tree.rel(name), tree.file_stat(name))]
                )
            except (OSError, ValueError):
                marks.append((name, None))
                continue
            marks += [(str(p), st and (st.st_size, st.st_mtime_ns)) for p, st in found]
    return tuple(marks)


def by_cell(
    sections: Iterable[tuple[str, Sequence[Item]]],
) -> tuple[list[dict[str, Any]], list[str]]:
    """The side panel's view of a gate's numbers: each notebook cell with the numbers traced
    to it (`{"notebook", "cell", "numbers"}`, in the order first met), and the unresolved
    items as `what -> why`."""
    cells: dict[tuple[str, str], list[str]] = {}
    unresolved = []
    for _, items in sections:
        for item in items:
            notebook, cell = item.notebook, item.cell
            if not item.ok:
                unresolved.append(f"{item.what} -> {item.trace}")
            elif notebook and cell:
                cells.setdefault((notebook, cell), []).append(item.what)
    shown = [{"notebook": nb, "cell": cell, "numbers": n} for (nb, cell), n in cells.items()]
    return shown, unresolved
