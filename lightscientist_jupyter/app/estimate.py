"""Before a run: what a stage table may cost with a model (`lightscientist estimate`,
`research --dry-run`, `%lightscientist estimate`). An estimate, never a measurement.

Per stage, the model calls, input and output tokens and their cost come from one of two bases:

- `recorded`: a recorded run of the same table (`--record`; `.lightscientist/recordings/` of
  the workspace, or `--from PATH`): the calls its sessions made in each stage, with the tokens
  the model reported (`usage` of each call line), or characters / 4 of what was sent and
  received where it reported none (the offline model). The workspace's recording counts when
  its project ran a table with the same stages; a stage the recorded run never reached falls
  back to the sizes.
- `sizes`: the skill's and the task's sizes. One visit per stage; its worker reads the skill,
  writes each output, runs a command and completes (3 + outputs calls), each call sending the
  worker prompt, the tool schemas, the task (the goal and a PROCESS.md digest that grows
  stage by stage, up to its bound) and everything said before in the session; the supervisor
  makes two calls (start the worker, finish the stage), each with its prompt and one event.

At the project's end a worker draws its lessons for the user's memory (`supervisor.lessons`):
one more row, `lessons`, on the same two bases.

The cost prices those tokens at the model's price (`runtime.metering.model_prices`: `--price`,
the price library, unknown for a local model). Nothing is written.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from lightscientist_jupyter.controller.loader import load_table
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.controller.table import Stage, StageTable
from lightscientist_jupyter.errors import BadInput, LightScientistError
from lightscientist_jupyter.runtime.metering.model_prices import price_for
from lightscientist_jupyter.runtime.metering.tokens import CHARS_PER_TOKEN
from lightscientist_jupyter.runtime.models.resolver import default_spec
from lightscientist_jupyter.runtime.recording.recorder import recording_files, run_headers
from lightscientist_jupyter.supervisor.prompts import PROCESS_DIGEST_CHARS, SUPERVISOR_PROMPT
from lightscientist_jupyter.values.prices import Price, parse_price
from lightscientist_jupyter.values.task import LESSONS_STAGE
from lightscientist_jupyter.values.usage import dollars
from lightscientist_jupyter.workspace import Workspace

WORKER_PROMPT_CHARS = 2100
"""The worker's system prompt as sent (with what the agent's middleware adds)."""
TOOL_SCHEMA_CHARS = 20000
"""The worker's 20 tool schemas as sent with each call (files, shell, lifecycle, literature,
jobs). This and the prompt were measured on a run recorded through the real OpenAI client."""
SUPERVISOR_TOOL_CHARS = 2600
TASK_CHARS = 900
"""A worker's first message without the goal and the PROCESS.md digest (its header, how to work)."""
ENTRY_CHARS = 700
"""What each earlier stage adds to the PROCESS.md digest."""
EVENT_CHARS = 1200
"""One supervisor event (a stage started, a worker finished with its summary)."""
OUTPUT_TOKENS = 600
"""A call that writes an output file: its content."""
STEP_TOKENS = 80
"""Any other call's answer (a tool call's arguments, a summary)."""
RESULT_TOKENS = 100
"""What a tool answers (the skill's text is counted apart)."""


@dataclasses.dataclass(frozen=True)
class StageEstimate:
    stage: str
    model_calls: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    basis: str
    """`recorded` or `sizes`."""
    cost: float | None = None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["tokens"] = self.tokens
        out["cost"] = "unknown" if self.cost is None else round(self.cost, 6)
        return out


@dataclasses.dataclass(frozen=True)
class Estimate:
    table: str
    model: str
    rows: tuple[StageEstimate, ...]
    price: Price | None
    recording: str | None
    """The recorded run the `recorded` rows come from (its folder or file), if any."""
    recorded_model: str | None = None

    @property
    def stages(self) -> int:
        """The table's stages (the rows but the project's end, its lessons)."""
        return sum(r.stage != LESSONS_STAGE for r in self.rows)

    @property
    def total(self) -> StageEstimate:
        costs = [r.cost for r in self.rows]
        return StageEstimate(
            "total",
            sum(r.model_calls for r in self.rows),
            sum(r.input_tokens for r in self.rows),
            sum(r.output_tokens for r in self.rows),
            sum(r.cached_tokens for r in self.rows),
            "/".join(sorted({r.basis for r in self.rows})),
            None if None in costs else sum(c or 0.0 for c in costs),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": True,
            "table": self.table,
            "model": self.model,
            "stages": self.stages,
            "rows": [r.to_dict() for r in self.rows],
            "total": self.total.to_dict(),
            "price": None if self.price is None else self.price.to_dict(),
            "recording": self.recording,
            "recorded_model": self.recorded_model,
        }


def estimate(
    workspace: str | os.PathLike[str] = ".",
    *,
    stages: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    price: str | None = None,
    source: str | None = None,
    goal: str = "",
) -> Estimate:
    """The estimate of a run of `stages` (default: the workspace's project's table, else the
    shipped one) with `model`, from `source` (a recording) or the workspace's recording of
    the same table when there is one, else from the sizes. Reads only."""
    ws = Workspace.at(workspace)
    state = load_state(ws.state_file) if ws.state_file.is_file() else None
    settings = state.settings if state is not None else {}
    table = load_table(stages or (state.stages_file if state is not None else None))
    spec = model or settings.get("model") or default_spec()
    base_url = base_url or settings.get("base_url")
    if price:
        parse_price(price)  # BadInput naming the part
    cost_of = price_for(spec, base_url, price or settings.get("price"))
    files, where = _recording(ws, table, source, state)
    recorded = _recorded(files, table)
    goal = goal or (state.goal if state is not None else "")
    rows = []
    for i, stage in enumerate(table):
        calls, tin, tout, cached = recorded.get(stage.id) or _from_sizes(stage, i, goal)
        rows.append(
            StageEstimate(
                stage.id,
                calls,
                tin,
                tout,
                cached,
                "recorded" if stage.id in recorded else "sizes",
                None if cost_of is None else cost_of.cost(tin, tout, cached),
            )
        )
    # the project's end: a worker draws its lessons for the user's memory
    calls, tin, tout, cached = recorded.get(LESSONS_STAGE) or _lessons_from_sizes(len(table), goal)
    rows.append(
        StageEstimate(
            LESSONS_STAGE,
            calls,
            tin,
            tout,
            cached,
            "recorded" if LESSONS_STAGE in recorded else "sizes",
            None if cost_of is None else cost_of.cost(tin, tout, cached),
        )
    )
    headers = run_headers(files)
    label = str(headers[0].get("model")) if headers else None
    return Estimate(str(table.path), spec, tuple(rows), cost_of, where, label)


def _recording(
    ws: Workspace, table: StageTable, source: str | None, state: Any
) -> tuple[list[Path], str | None]:
    """The recording files to estimate from and where they are: `--from`'s (which must be a
    run of this table), or the workspace's when its project ran a table with the same stages;
    none otherwise."""
    if source:
        files = recording_files(source)
        if not files:
            raise BadInput(
                f"--from {source}: no recording there (give a workspace that ran with --record, "
                "its .lightscientist/recordings folder, or a run-NNNN.jsonl file)"
            )
        other = sorted(
            set(_recorded(files, table, strict=False)) - {"", LESSONS_STAGE, *table.ids()}
        )
        if other:
            raise BadInput(
                f"--from {source} is a run of another table: it has stage(s) "
                f"{', '.join(other)}, which {table.path.name} lacks"
            )
        return files, source
    if state is None or not state.stages_file:
        return [], None
    try:
        same = load_table(state.stages_file).ids() == table.ids()
    except LightScientistError:  # the project's table is gone or no longer loads
        same = False
    folder = ws.state_dir / "recordings"
    files = recording_files(str(folder)) if same and folder.is_dir() else None
    return (files, str(folder)) if files else ([], None)


def _recorded(
    files: list[Path], table: StageTable, *, strict: bool = True
) -> dict[str, tuple[int, int, int, int]]:
    """Per stage of the recording: (calls, input, output, cached) tokens."""
    out: dict[str, list[int]] = {}
    for path in files:
        defs: dict[str, Any] = {}
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                line = json.loads(raw) if raw.strip() else {}
            except ValueError:
                continue  # a line cut by a crash
            if line.get("kind") != "call":
                continue
            defs.update(line.get("defs") or {})
            stage = str(line.get("stage") or "")
            if strict and stage not in table and stage != LESSONS_STAGE:
                continue
            sums = out.setdefault(stage, [0, 0, 0, 0])
            for n, value in enumerate((1, *_call_tokens(line, defs))):
                sums[n] += value
    return {k: (v[0], v[1], v[2], v[3]) for k, v in out.items()}


def _call_tokens(line: dict[str, Any], defs: dict[str, Any]) -> tuple[int, int, int]:
    response = line.get("response") or {}
    usage = response.get("usage") or {}
    if usage.get("input_tokens") or usage.get("output_tokens"):
        details = usage.get("input_token_details") or {}
        return (
            int(usage.get("input_tokens") or 0),
            int(usage.get("output_tokens") or 0),
            int(details.get("cache_read") or 0),
        )
    sent = sum(_chars(defs.get(h) or {}) for h in line.get("messages") or [])
    return _tokens(sent), _tokens(_chars(response)), 0


def _chars(view: dict[str, Any]) -> int:
    content = view.get("content") or ""
    text = content if isinstance(content, str) else json.dumps(content)
    calls = view.get("tool_calls")
    return len(text) + (len(json.dumps(calls)) if calls else 0)


def _tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


def _from_sizes(stage: Stage, index: int, goal: str) -> tuple[int, int, int, int]:
    """(calls, input, output, cached) of one visit of `stage`, the `index`-th of the table."""
    try:
        skill = stage.skill.stat().st_size
    except OSError:
        skill = 0
    task = TASK_CHARS + len(goal) + min(PROCESS_DIGEST_CHARS, index * ENTRY_CHARS)
    base = _tokens(WORKER_PROMPT_CHARS + TOOL_SCHEMA_CHARS + task)
    answers = [STEP_TOKENS] + [OUTPUT_TOKENS] * len(stage.outputs) + [STEP_TOKENS, STEP_TOKENS]
    tin, said = 0, 0
    for k, answer in enumerate(answers):
        tin += base + said + (_tokens(skill) if k else 0)
        said += answer + RESULT_TOKENS
    supervisor = 2 * _tokens(len(SUPERVISOR_PROMPT) + SUPERVISOR_TOOL_CHARS + EVENT_CHARS)
    return len(answers) + 2, tin + supervisor, sum(answers) + 2 * STEP_TOKENS, 0


LESSONS_TOKENS = 300
"""The lessons a worker draws at a project's end (a few sentences)."""


def _lessons_from_sizes(stages: int, goal: str) -> tuple[int, int, int, int]:
    """(calls, input, output, cached) of the lessons worker: it reads PROCESS.md (an entry a
    stage) and delivers its lessons, two calls with its task (the digest at its bound)."""
    process = stages * ENTRY_CHARS
    task = TASK_CHARS + len(goal) + min(PROCESS_DIGEST_CHARS, process)
    base = _tokens(WORKER_PROMPT_CHARS + TOOL_SCHEMA_CHARS + task)
    tin = base + (base + STEP_TOKENS + _tokens(process))
    return 2, tin, STEP_TOKENS + LESSONS_TOKENS, 0


# ---------------------------------------------------------------------------- text


def render(est: Estimate) -> list[str]:
    """`lightscientist estimate` as text lines: a table, a total, and what it rests on."""
    lines = [
        f"Estimate (not a measurement) of a run of {est.table} "
        f"({est.stages} stages, then its lessons) with model {est.model}:",
        f"{'stage':<24} {'calls':>6} {'in':>10} {'out':>9}  {'cost':<10} basis",
    ]
    for row in (*est.rows, est.total):
        cost = dollars(row.cost, unknown="unknown")
        lines.append(
            f"{row.stage:<24} {row.model_calls:>6} {row.input_tokens:>10,} "
            f"{row.output_tokens:>9,}  {cost:<10} {row.basis}"
        )
    if est.recording:
        lines.append(f"recorded: from {est.recording} (model {est.recorded_model or '?'})")
    if any(r.basis == "sizes" for r in est.rows):
        lines.append(
            "sizes: from the skill and task sizes, one visit per stage (loops and retries "
            "cost more; record a run with --record for a better estimate)"
        )
    if est.price is None:
        lines.append("cost: unknown — no price for this model (give one with --price in=…,out=…)")
    return lines
