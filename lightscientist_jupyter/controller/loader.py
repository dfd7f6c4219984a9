"""Read a stage table from TOML and validate it completely before anything is used.

Every problem is collected, each naming the file, the stage and the key (and the line where
one can be found), and reported together in one `StageTableError`: a user fixing a table
sees the whole list at once. Nothing is half-loaded: either a complete `StageTable` comes
back or the error does.
"""

from __future__ import annotations

import importlib.resources
import os
import re
import tomllib
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from lightscientist_jupyter.controller.agent_table import agents_table
from lightscientist_jupyter.controller.checks import check_problems, literature_table
from lightscientist_jupyter.controller.table import DONE, Stage, StageTable
from lightscientist_jupyter.errors import StageTableError
from lightscientist_jupyter.values import review as reviews
from lightscientist_jupyter.values.limits import LIMIT_KEYS, parse_table
from lightscientist_jupyter.values.search import SearchSpec, parse_spec

TOP_KEYS = {"start": str, "stages": dict, "literature": dict, "agents": dict}
STAGE_KEYS: dict[str, tuple[type, bool]] = {
    "skill": (str, True),
    "outputs": (list, True),
    "next": (str, True),
    "allowed": (list, True),
    "approval": (bool, False),
    "max_visits": (int, False),
    "network": (bool, False),
    "limits": (dict, False),
    "handoff": (bool, False),
    "budget": (dict, False),
    "checks": (list, False),
    "search": (dict, False),
    "review": (dict, False),
    "memory": (bool, False),
    "agent": (str, False),
}
_STAGE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_HEADER = re.compile(
    r"""^\s*\[\s*(stages|agents)\s*\.\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_-]+))\s*\]"""
)
_KEY = re.compile(r"""^\s*([A-Za-z0-9_-]+)\s*=""")


def shipped_stages() -> Path:
    """The folder of the shipped stage tables (`research.toml`, `review.toml`, `skills/`).

    The repository keeps them in its top-level `stages/` folder, the one source; a wheel
    carries that folder into the package (`lightscientist_jupyter/stages`, pyproject's
    `force-include`). So the package's own `stages/` is looked at first (an installed wheel),
    then the checkout's top-level one beside the package (an editable install, a run from
    the checkout). Skill files must be real files a worker can read, so the tables are found
    only in a package that lives in a folder, never in a zip.
    """
    package = importlib.resources.files("lightscientist_jupyter")
    if isinstance(package, Path):
        for folder in (package / "stages", package.parent / "stages"):
            if (folder / "research.toml").is_file():
                return folder.resolve()
    raise StageTableError(
        str(package / "stages"), ["the shipped stage tables are missing from this installation"]
    )


def default_table_path() -> Path:
    """The default stage table, `research.toml` among the shipped tables (`shipped_stages`)."""
    return shipped_stages() / "research.toml"


class _Lines:
    """Finds the line of a stage's or an agent's header, or of one of its keys (best effort)."""

    def __init__(self, text: str):
        self.headers: dict[tuple[str, str], int] = {}
        self.keys: dict[tuple[tuple[str, str] | None, str], int] = {}
        current: tuple[str, str] | None = None
        for number, line in enumerate(text.splitlines(), start=1):
            match = _HEADER.match(line)
            if match:
                section, *names = match.groups()
                current = (section, next(g for g in names if g))
                self.headers.setdefault(current, number)
                continue
            if line.lstrip().startswith("["):
                current = ("", "\0other")
                continue
            key = _KEY.match(line)
            if key:
                self.keys.setdefault((current, key.group(1)), number)

    def of(self, stage: str | None, key: str | None = None) -> str:
        return self._find(("stages", stage) if stage is not None else None, key)

    def of_agent(self, name: str, key: str | None = None) -> str:
        return self._find(("agents", name), key)

    def _find(self, table: tuple[str, str] | None, key: str | None) -> str:
        number = self.keys.get((table, key)) if key else None
        if number is None and table is not None:
            number = self.headers.get(table)
        return f" (line {number})" if number else ""


def load_table(path: str | os.PathLike[str] | None = None) -> StageTable:
    """Load and validate a stage table; raises `StageTableError` listing every problem."""
    path = Path(path) if path is not None else default_table_path()
    path = path.expanduser().resolve()
    shown = str(path)
    try:
        raw_bytes = path.read_bytes()
    except FileNotFoundError:
        raise StageTableError(shown, ["file not found"]) from None
    except OSError as exc:
        raise StageTableError(shown, [f"cannot read the file: {exc.strerror}"]) from None
    try:
        text = raw_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw_bytes[: exc.start].count(b"\n") + 1
        raise StageTableError(shown, [f"not UTF-8 text (line {line}, byte {exc.start})"]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StageTableError(shown, [f"not valid TOML: {exc}"]) from None
    problems: list[str] = []
    table = _build(path, data, _Lines(text), problems)
    if problems or table is None:
        raise StageTableError(shown, problems)
    return table


def _build(
    path: Path, data: dict[str, Any], lines: _Lines, problems: list[str]
) -> StageTable | None:
    for key in data:
        if key not in TOP_KEYS:
            problems.append(
                f"unknown top-level key '{key}'{lines.of(None, key)}; "
                f"expected {', '.join(TOP_KEYS)}"
            )
    start = data.get("start")
    if start is None:
        problems.append("missing top-level key 'start' (the first stage's id)")
    elif not isinstance(start, str):
        problems.append(
            f"top-level key 'start' must be a string, not {_kind(start)}{lines.of(None, 'start')}"
        )
        start = None
    raw_stages = data.get("stages")
    if raw_stages is None:
        problems.append('missing [stages] tables: define at least one [stages."<id>"]')
        return None
    if not isinstance(raw_stages, dict):
        problems.append(f"top-level key 'stages' must be a table, not {_kind(raw_stages)}")
        return None

    stages: dict[str, Stage] = {}
    known = set(raw_stages) | {DONE}
    for stage_id, raw in raw_stages.items():
        stage = _build_stage(path, stage_id, raw, known, lines, problems)
        if stage is not None:
            stages[stage_id] = stage
    agents = agents_table(data.get("agents"), raw_stages, lines, problems)
    if not raw_stages:
        problems.append("the [stages] table is empty")
        return None

    if start is not None and start not in raw_stages:
        problems.append(
            f"top-level key 'start'{lines.of(None, 'start')}: "
            f"'{start}' is not a stage of this table"
        )
    if problems or start is None:  # a missing start is one of the problems
        return None

    _check_graph(start, stages, lines, problems)
    if problems:
        return None
    literature = literature_table(path, data.get("literature"), problems)
    if problems:
        return None
    return StageTable(path=path, start=start, stages=stages, literature=literature, agents=agents)


def _build_stage(
    path: Path, stage_id: str, raw: Any, known: set[str], lines: _Lines, problems: list[str]
) -> Stage | None:
    """Check one stage; every problem is reported, even when an unrelated key is also wrong."""
    where = f"stage '{stage_id}'"
    count = len(problems)
    if stage_id == DONE:
        problems.append(
            f"{where}{lines.of(stage_id)}: '{DONE}' is reserved for the end of the project"
        )
    elif not _STAGE_ID.match(stage_id):
        problems.append(f"{where}{lines.of(stage_id)}: ids use letters, digits, '.', '_' and '-'")
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be a table, not {_kind(raw)}")
        return None
    for key, value in raw.items():
        if key not in STAGE_KEYS:
            hint = ""
            if isinstance(value, dict):
                hint = f' (a stage id with dots must be quoted: [stages."{stage_id}.{key}"])'
            problems.append(
                f"{where}, unknown key '{key}'{lines.of(stage_id, key)}{hint}; "
                f"expected {', '.join(STAGE_KEYS)}"
            )
    ok: dict[str, Any] = {}  # the keys present with the right type; later checks use only these
    for key, (kind, required) in STAGE_KEYS.items():
        if key not in raw:
            if required:
                problems.append(f"{where}{lines.of(stage_id)}: missing required key '{key}'")
            continue
        value = raw[key]
        if kind is int and isinstance(value, bool) or not isinstance(value, kind):
            problems.append(
                f"{where}, key '{key}'{lines.of(stage_id, key)}: must be "
                f"{_kind_name(kind)}, not {_kind(value)}"
            )
        else:
            ok[key] = value

    outputs = allowed = None
    if "outputs" in ok:
        outputs = _string_list(where, "outputs", ok["outputs"], lines, stage_id, problems)
        for output in outputs or ():
            pure = PurePosixPath(output)
            if pure.is_absolute() or ".." in pure.parts or output.strip() in ("", "."):
                problems.append(
                    f"{where}, key 'outputs'{lines.of(stage_id, 'outputs')}: "
                    f"'{output}' must be a path inside the workspace "
                    "(relative, no '..')"
                )
    if "allowed" in ok:
        allowed = _string_list(where, "allowed", ok["allowed"], lines, stage_id, problems)
        if allowed == []:
            problems.append(
                f"{where}, key 'allowed'{lines.of(stage_id, 'allowed')}: "
                "must list at least one next stage"
            )
        for target in allowed or ():
            if target not in known:
                problems.append(
                    f"{where}, key 'allowed'{lines.of(stage_id, 'allowed')}: "
                    f"'{target}' is not a stage of this table"
                )
    if "next" in ok and allowed and ok["next"] not in allowed:
        problems.append(
            f"{where}, key 'next'{lines.of(stage_id, 'next')}: '{ok['next']}' "
            f"is not in 'allowed' {list(allowed)}"
        )
    max_visits = ok.get("max_visits")
    if max_visits is not None and max_visits < 1:
        problems.append(
            f"{where}, key 'max_visits'{lines.of(stage_id, 'max_visits')}: must be at least 1"
        )
    limits: dict[str, int | None] = {}
    if "limits" in ok:
        try:
            limits = parse_table(ok["limits"])
        except ValueError as exc:
            problems.append(
                f"{where}, key 'limits'{lines.of(stage_id, 'limits')}: {exc} "
                f'(keys: {", ".join(LIMIT_KEYS)}; e.g. limits = {{ mem = "2G", cpu = 600 }})'
            )
    budget: dict[str, float] = {}
    if "budget" in ok:
        from lightscientist_jupyter.controller import budget as budgets

        try:
            budget = budgets.parse_limits(ok["budget"], budgets.STAGE_KEYS)
        except ValueError as exc:
            problems.append(
                f"{where}, key 'budget'{lines.of(stage_id, 'budget')}: {exc} "
                "(e.g. budget = { usd = 1, tokens = 200000 })"
            )
    search: SearchSpec | None = None
    if "search" in ok:
        try:
            search = parse_spec(ok["search"])
        except ValueError as exc:
            problems.append(
                f"{where}, key 'search'{lines.of(stage_id, 'search')}: {exc} (e.g. search = "
                '{ metric = "final_loss", goal = "min", nodes = 12, parallel = 2 })'
            )
    review: reviews.ReviewSpec | None = None
    if "review" in ok:
        try:
            review = reviews.parse_spec(ok["review"])
        except ValueError as exc:
            problems.append(
                f"{where}, key 'review'{lines.of(stage_id, 'review')}: {exc} (e.g. review = "
                '{ reviewers = 3, rubric = "neurips", accept = 6, rounds = 2 })'
            )
    if search is not None and review is not None:
        problems.append(f"{where}: a stage is a search or a review, not both")
    checks = tuple(ok.get("checks", ()))
    problems += check_problems(f"{where}, key 'checks'{lines.of(stage_id, 'checks')}", checks)
    skill = None
    if "skill" in ok:
        skill = (path.parent / ok["skill"]).resolve()
        skill_problem = _check_skill(skill)
        if skill_problem:
            problems.append(
                f"{where}, key 'skill'{lines.of(stage_id, 'skill')}: {skill} {skill_problem}"
            )
    # a key that is absent or wrong is one of the problems
    if len(problems) > count or skill is None or outputs is None or allowed is None:
        return None
    return Stage(
        id=stage_id,
        skill=skill,
        outputs=tuple(outputs),
        next=ok["next"],
        allowed=tuple(allowed),
        approval=ok.get("approval", False),
        max_visits=max_visits,
        network=ok.get("network", False),
        limits=limits,
        handoff=ok.get("handoff", False),
        budget=budget,
        checks=checks,
        search=search,
        review=review,
        memory=ok.get("memory", True),
        agent=ok.get("agent"),
    )


def _string_list(
    where: str, key: str, value: list[Any], lines: _Lines, stage_id: str, problems: list[str]
) -> list[str] | None:
    """The list's strings, or None (with a problem reported) when an entry is not one."""
    bad = [v for v in value if not isinstance(v, str) or not v.strip()]
    if bad:
        problems.append(
            f"{where}, key '{key}'{lines.of(stage_id, key)}: every entry must be a "
            f"non-empty string (found {bad[0]!r})"
        )
        return None
    duplicates = sorted({v for v in value if value.count(v) > 1})
    if duplicates:
        problems.append(
            f"{where}, key '{key}'{lines.of(stage_id, key)}: "
            f"listed more than once: {', '.join(duplicates)}"
        )
    return list(value)


def _check_skill(skill: Path) -> str | None:
    if not skill.exists():
        return "does not exist"
    if not skill.is_file():
        return "is not a file"
    try:
        text = skill.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return "is not UTF-8 text"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if not text.strip():
        return "is empty"
    return None


def _check_graph(start: str, stages: dict[str, Stage], lines: _Lines, problems: list[str]) -> None:
    reachable = _closure([start], lambda s: stages[s].allowed if s in stages else ())
    for stage_id in stages:
        if stage_id not in reachable:
            problems.append(
                f"stage '{stage_id}'{lines.of(stage_id)}: not reachable from "
                f"start '{start}' (no stage lists it in 'allowed')"
            )
    predecessors: dict[str, list[str]] = {}
    for stage in stages.values():
        for target in stage.allowed:
            predecessors.setdefault(target, []).append(stage.id)
    finishing = _closure([DONE], lambda s: predecessors.get(s, ()))
    if DONE not in reachable:
        problems.append(
            f"no path from start '{start}' to '{DONE}': some stage must list '{DONE}' in 'allowed'"
        )
    for stage_id in stages:
        if stage_id in reachable and stage_id not in finishing:
            problems.append(
                f"stage '{stage_id}'{lines.of(stage_id)}: has no path to '{DONE}' "
                "(the project would be stuck there)"
            )


def _closure(seeds: list[str], step: Callable[[str], Iterable[str]]) -> set[str]:
    seen = set(seeds)
    queue = deque(seeds)
    while queue:
        for nxt in step(queue.popleft()):
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen


def _kind(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(type(value), type(value).__name__)


def _kind_name(kind: type) -> str:
    return {
        bool: "true or false",
        int: "an integer",
        str: "a string",
        list: "a list",
        dict: "a table",
    }[kind]
