"""Layer 1 and the user's memory: what a stage's task recalls, what a project files.

Layer 1 is the layer that knows when a stage's result is final, so it files it: each stage
visit's `PROCESS.md` entry becomes a `finding` (a rejected gate's a `lesson`, with the
researcher's reason), once the step's snapshot is taken so the entry names it; the lessons a
worker draws at the project's end come in through `file_lessons`. And when a stage's task is
first handed down, layer 1 recalls the few entries of *other* projects that match the goal
and the stage (lessons first) and keeps them in `state.json` with the task, so a resumed
stage is told the same; the task header carries them (`StageTask.recalled`).

Memory helps a run and never stops one: a store that cannot be opened or written is said once
(`memory.unavailable`) and the run goes on without it. It is off for a run started with
`--no-memory` (`memory_on`) and for a stage with `memory = false`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from lightscientist_jupyter import memory
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller.actions import FileMemory
from lightscientist_jupyter.controller.moves import GOAL_CHARS
from lightscientist_jupyter.controller.state import ProjectState
from lightscientist_jupyter.controller.table import StageTable
from lightscientist_jupyter.errors import LightScientistError, MemoryUnavailable
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.literature.bibtex import paper_of_fields, parse_bibtex
from lightscientist_jupyter.literature.config import LiteratureConfig
from lightscientist_jupyter.literature.records import Paper
from lightscientist_jupyter.memory import Entry, NewEntry
from lightscientist_jupyter.memory.entries import one_line
from lightscientist_jupyter.vocab import (
    DecisionKind,
    EventType,
    MemoryKind,
    MemorySource,
    ProjectStatus,
)
from lightscientist_jupyter.workspace import Workspace

RECALL_LESSONS = 2
"""A task header's lessons at most (the best-ranked)."""
RECALL_OTHERS = 1
"""…and its findings or papers at most."""
HIT_TEXT_CHARS = 200
"""How much of a hit's text its `memory.recall` event carries."""

T = TypeVar("T")


class MemoryCalls:
    """The memory calls of `ResearchController` (which provides these attributes)."""

    workspace: Workspace
    table: StageTable
    _state: ProjectState
    bus: EventBus
    _lock: threading.RLock
    memory_on = True
    """False for a run started with `--no-memory`: nothing is recalled or filed."""
    _memory_said = False

    def _save(self) -> None:  # ResearchController's
        raise NotImplementedError

    def memory_for(self, stage_id: str) -> bool:
        """Whether `stage_id` recalls and files (the run's `--no-memory`, the stage's key)."""
        return self.memory_on and stage_id in self.table and self.table[stage_id].memory

    # ------------------------------------------------------------------ recalling

    def recalled(self, stage_id: str) -> tuple[Entry, ...]:
        """The entries the current task's header carries: recalled once per task (under the
        lock) and kept in the state with it."""
        s = self._state
        if not self.memory_for(stage_id):
            return ()
        kept = s.recall if s.recall.get("task_id") == s.task_id else None
        if kept is None:
            query = recall_query(s.goal, stage_id)
            hits = self._with_memory("recall", lambda store: _recall(store, query, self.root))
            kept = {"task_id": s.task_id, "hits": [h.entry.to_dict() for h in hits or ()]}
            s.recall = kept
            self._save()
            if kept["hits"]:  # said once, when there is something to say
                self._said_recall(stage_id, query, kept["hits"])
        return tuple(Entry(**hit) for hit in kept["hits"])

    def _said_recall(self, stage_id: str, query: str, hits: list[dict[str, Any]]) -> None:
        task_id = self._state.task_id
        self.bus.emit(
            EventType.MEMORY_RECALL,
            f"{len(hits)} entr{'y' if len(hits) == 1 else 'ies'} recalled for {task_id}: "
            + "; ".join(f"{h['kind']} from {Entry(**h).project_name}" for h in hits),
            stage=stage_id,
            task_id=task_id,
            data={
                "for": "task",
                "stage": stage_id,
                "task_id": task_id,
                "query": query,
                "hits": [hit_record(h) for h in hits],
            },
        )

    # ------------------------------------------------------------------ filing

    @property
    def root(self) -> str:
        return str(self.workspace.root)

    def _file_memory(
        self, filings: Sequence[FileMemory], snapshots: dict[tuple[str, int], str]
    ) -> None:
        """File the step's entries (after its snapshots: `snapshots` names each visit's), and
        the works the project cited since the last stage it filed."""
        wanted = [f for f in filings if self.memory_for(f.stage)]
        if not wanted:
            return
        first = wanted[0]
        entries = [
            NewEntry(
                kind=f.kind,
                text=f.text,
                project=self.root,
                key=f.key,
                stage=f.stage,
                visit=f.visit,
                snapshot=snapshots.get((f.stage, f.visit), ""),
            )
            for f in wanted
        ]
        snapshot = snapshots.get((first.stage, first.visit), "")
        entries += self._new_papers(first.stage, first.visit, snapshot)
        self._file(entries, first.stage, f"{first.stage}#{first.visit}")

    def _new_papers(self, stage: str, visit: int, snapshot: str) -> list[NewEntry]:
        """A `paper` entry for each work of the references file not filed before (each
        once a project: `state.papers`); a file that cannot be read gives none."""
        s = self._state
        try:
            references = LiteratureConfig.load(self.workspace.root, env=False).references
            text = Beneath(self.workspace.root).read_text(references, errors="replace")
            cited = parse_bibtex(text, references)
        except (OSError, LightScientistError):
            return []
        found = []
        for key, fields in cited:
            paper = paper_of_fields(fields)
            ident = paper.doi or paper.arxiv or key
            if not paper.title or ident in s.papers:
                continue
            s.papers.append(ident)
            found.append(
                NewEntry(
                    kind=MemoryKind.PAPER,
                    text=paper_text(paper, s.goal),
                    project=self.root,
                    key=f"paper:{ident}",
                    stage=stage,
                    visit=visit,
                    snapshot=snapshot,
                )
            )
        if found:
            self._save()
        return found

    def lessons_due(self, why: str) -> bool:
        """Whether the lessons of `why` (`done`: the project's end) are still to be drawn."""
        with self._lock:
            return self.memory_on and why not in self._state.lessons

    def lessons_owed(self) -> list[tuple[str, str, str]]:
        """The occasions whose lessons a worker is still to draw, oldest first, as
        `(why, stage, reason)`: each gate the researcher rejected (`reject:<decision>`, its
        reason in the researcher's words) and the project's end (`done`)."""
        with self._lock:
            s = self._state
            if not self.memory_on:
                return []
            owed = []
            for d in s.decisions:
                why = f"reject:{d.get('id')}"
                rejected = d.get("kind") == DecisionKind.GATE and d.get("approve") is False
                if rejected and why not in s.lessons and self.memory_for(str(d.get("stage"))):
                    comment = str(d.get("comment") or "").strip() or "no reason given"
                    reason = (
                        f"the researcher rejected '{d.get('stage')}' at its gate and sent the "
                        f"project back to '{d.get('to')}': “{comment}”"
                    )
                    owed.append((why, str(d.get("stage")), reason))
            if s.status == ProjectStatus.DONE and "done" not in s.lessons:
                owed.append(("done", "", ""))
            return owed

    def file_lessons(
        self, lessons: Sequence[str], *, why: str, stage: str = "", missing: str = ""
    ) -> list[Entry]:
        """File the lessons a worker drew (`why`: `done` at the project's end) and note that
        they were drawn, even when there are none (`missing` says why, in a `memory.filed`
        event that files nothing): the same `why` again adds nothing."""
        with self._lock:
            if why in self._state.lessons:
                return []
            self._state.lessons.append(why)
            self._save()
        if not self.memory_on:
            return []
        entries = [
            NewEntry(
                kind=MemoryKind.LESSON,
                text=text,
                project=self.root,
                key=f"lesson:{why}#{n}",
                stage=stage,
                visit=self._state.visits.get(stage, 0),
                source=MemorySource.WORKER,
            )
            for n, text in enumerate((t.strip() for t in lessons if t.strip()), start=1)
        ]
        if not entries:
            line = missing or "no lessons drawn"
            data = {"stage": stage, "task_id": why, "entries": [], "reason": line}
            self.bus.emit(EventType.MEMORY_FILED, line, stage=stage or None, data=data)
            return []
        return self._file(entries, stage or None, why)

    def _file(self, entries: list[NewEntry], stage: str | None, label: str) -> list[Entry]:
        kept = self._with_memory("write", lambda store: [store.add(e) for e in entries]) or []
        if kept:
            self.bus.emit(
                EventType.MEMORY_FILED,
                f"{len(kept)} entr{'y' if len(kept) == 1 else 'ies'} filed in memory ({label})",
                stage=stage,
                data={
                    "stage": stage or "",
                    "task_id": label,
                    "entries": [
                        {
                            "id": e.id,
                            "kind": e.kind,
                            "key": e.key,
                            "text": one_line(e.text, HIT_TEXT_CHARS),
                        }
                        for e in kept
                    ],
                },
            )
        return kept

    def _with_memory(self, doing: str, work: Callable[[memory.MemoryStore], T]) -> T | None:
        """`work` on the user's store, opened for it; None (said once a run) when the store
        cannot be used."""
        try:
            store = memory.open_store()
            try:
                return work(store)
            finally:
                store.close()
        except MemoryUnavailable as exc:
            if not self._memory_said:
                self._memory_said = True
                self.bus.emit(
                    EventType.MEMORY_UNAVAILABLE,
                    f"memory not used ({doing}): {exc}",
                    data={"reason": str(exc)},
                )
            return None


def paper_text(paper: Paper, goal: str) -> str:
    """A cited work as the memory keeps it: what it is, and the question it was cited for."""
    authors = ", ".join(paper.authors[:3]) + (" et al." if len(paper.authors) > 3 else "")
    ids = "; ".join(
        x
        for x in (
            f"doi:{paper.doi}" if paper.doi else "",
            f"arXiv:{paper.arxiv}" if paper.arxiv else "",
        )
        if x
    )
    head = f"{paper.title}. {authors} ({paper.year or 'n.d.'})"
    lines = [head + (f". {paper.venue}" if paper.venue else "") + (f". {ids}" if ids else "")]
    if paper.abstract:
        lines.append(paper.abstract)
    lines.append(f"Cited by a project on: {goal}")
    return "\n".join(lines)


def recall_query(goal: str, stage_id: str) -> str:
    """What a stage's task recalls by: the project's goal (its start, as a memory entry keeps
    it) and the stage's name's words."""
    return f"{goal[:GOAL_CHARS]} {' '.join(re.split(r'[._-]+', stage_id))}"


def _recall(store: memory.MemoryStore, query: str, project: str) -> list[memory.Hit]:
    lessons = store.search(
        query, RECALL_LESSONS, kinds=[MemoryKind.LESSON], exclude_project=project
    )
    others = store.search(
        query, RECALL_OTHERS, kinds=[MemoryKind.FINDING, MemoryKind.PAPER], exclude_project=project
    )
    return lessons + others


def hit_record(entry: dict[str, Any]) -> dict[str, Any]:
    """A recalled entry as a `memory.recall` event carries it (its text shortened)."""
    keys = ("id", "kind", "project", "stage", "visit")
    return {**{k: entry[k] for k in keys}, "text": one_line(str(entry["text"]), HIT_TEXT_CHARS)}
