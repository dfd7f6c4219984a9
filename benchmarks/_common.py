"""Shared by the benchmark scripts: the machine, small statistics, tables, results files,
and the *bare* deepagents agents the three-layer run is compared against.

Nothing here is part of the package. The bare agents use the package's offline model, its
worker system prompt and its workspace backend (so they get the same tools, the same files and
the same commands as a LightScientist worker), but none of its layers: no controller, no
supervisor, no worker records, no events.
"""

from __future__ import annotations

import argparse
import atexit
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks"
GOAL = "Does learning-rate warmup help a small MLP?"


def _private_memory() -> None:
    """The runs of a benchmark file into a user memory of their own, empty at the script's
    start and removed at its end (`$LIGHTSCIENTIST_MEMORY`, which the `lightscientist`
    processes it starts inherit): never into the user's, where a later project would recall
    benchmark runs as lessons; and a figure does not depend on what the user's memory holds."""
    folder = tempfile.mkdtemp(prefix="ls-bench-memory-")
    os.environ["LIGHTSCIENTIST_MEMORY"] = os.path.join(folder, "memory.sqlite3")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)


_private_memory()


# ----------------------------------------------------------------------------- the machine


def machine() -> dict[str, Any]:
    """CPU model, cores, memory, OS, Python, date: what RESULTS.md records."""
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    return {
        "cpu": cpu,
        "cores": cores,
        "memory_gib": mem_gib,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("deepagents", "langgraph", "langchain-core", "langgraph-checkpoint-sqlite"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "?"
    return out


# ----------------------------------------------------------------------------- numbers


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    """The value below which `q` % of `values` lie (the nearest of them)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def runs_arguments(doc: str, argv: list[str] | None, each: str) -> argparse.Namespace:
    """The arguments of a script timing a few kinds of runs: `--runs N` of `each` (5;
    `--quick`: 2) and `--json OUT`."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help=f"{each} of each kind")
    parser.add_argument("--quick", action="store_true", help=f"tiny: two {each} of each kind")
    parser.add_argument("--json", help="write the results here (for run_all.py)")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs = 2
    return args


def spread(name: str, seconds: Sequence[float]) -> list[str]:
    """A table row: `name`, then the least, median and largest of `seconds`."""
    return [name, *(f"{x:.2f} s" for x in (min(seconds), median(seconds), max(seconds)))]


def fmt_int(n: float) -> str:
    return f"{n:,.0f}"


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> tuple[str, str]:
    """(plain text table for the terminal, Markdown table for RESULTS.md)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    right = [
        bool(cells[1:]) and all(_numeric(r[i]) or r[i] == "median" for r in cells[1:])
        for i in range(len(headers))
    ]
    text = []
    for n, row in enumerate(cells):
        text.append(
            "  ".join(
                c.rjust(w) if right[i] and n else c.ljust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=False))
            ).rstrip()
        )
        if n == 0:
            text.append("  ".join("-" * w for w in widths))
    md = [
        "| " + " | ".join(cells[0]) + " |",
        "|" + "|".join("---:" if right[i] else "---" for i in range(len(headers))) + "|",
    ]
    md += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells[1:]]
    return "\n".join(text), "\n".join(md)


def _numeric(text: str) -> bool:
    t = text.replace(",", "").replace("×", "").replace("%", "").strip()
    for suffix in (" ms", " µs", " s", " MB", " KB", " GB", " B", "/s"):
        t = t.removesuffix(suffix)
    try:
        float(t)
        return True
    except ValueError:
        return False


def target(
    name: str, measured: str, goal: str, *, value: float, limit: float, higher: bool, why: str = ""
) -> dict[str, Any]:
    """One row of the targets table: met when `value` ≥ `limit` (`higher`) or ≤ it.
    `why` explains a miss (RESULTS.md prints it with the shortfall)."""
    met = value >= limit if higher else value <= limit
    short = (limit - value) / limit if higher else (value - limit) / limit
    return {
        "name": name,
        "measured": measured,
        "target": goal,
        "met": bool(met),
        "why": why,
        "value": value,
        "limit": limit,
        "higher": higher,
        "miss_by": ""
        if met
        else (
            f"{100 * short:.0f}% below the target"
            if higher
            else f"{100 * short:.0f}% above the target"
        ),
    }


class Report:
    """What a script prints and what it hands to run_all (with --json)."""

    def __init__(self, title: str):
        self.title = title
        self.parts: list[str] = []
        self.targets: list[dict[str, Any]] = []
        self.data: dict[str, Any] = {}

    def say(self, text: str = "") -> None:
        print(text, flush=True)
        self.parts.append(text)

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        text, md = table(headers, rows)
        print(text, flush=True)
        self.parts.append(md)

    def check(self, row: dict[str, Any]) -> None:
        self.targets.append(row)
        mark = "met" if row["met"] else f"MISSED ({row['miss_by']})"
        print(
            f"target {row['name']}: {row['measured']} (target {row['target']}) — {mark}", flush=True
        )

    def write(self, path: str | None) -> None:
        if not path:
            return
        Path(path).write_text(
            json.dumps(
                {
                    "title": self.title,
                    "markdown": "\n\n".join(p for p in self.parts if p.strip()),
                    "targets": self.targets,
                    "data": self.data,
                },
                indent=1,
                default=str,
            ),
            encoding="utf-8",
        )


# ----------------------------------------------------------------------------- running


def cli_env() -> dict[str, str]:
    """The environment of a `lightscientist` subprocess: the offline model, whatever is set."""
    return {**os.environ, "LIGHTSCIENTIST_MODEL": "", "OPENAI_BASE_URL": ""}


def cli(workspace: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args, "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=cli_env(),
    )


QUICK_UNTIL = "experiment.setup"
"""Where a `--quick` run from experiment.setup pauses (`--until`): after that one stage, a
worker that writes the experiment's script and runs its check, which is what most run
scripts time. What follows is no such script's subject and took most of a quick run: the
search's eight nodes (each a worker and a job; jobs.py, snapshots.py and recording.py go on
to `QUICK_SEARCH_UNTIL` for them), the analysis notebook, the figure, the paper's PDF
(pdf.py and notebook.py time those tools on their own)."""

QUICK_SEARCH_UNTIL = "experiment.loop"
"""Where a `--quick` run that needs the experiment's search pauses: after it."""


def span_arguments(parser: argparse.ArgumentParser) -> None:
    """`--stage` and `--until`: where a script's runs start, and the stage they pause after."""
    parser.add_argument("--stage", default=None, help="start at this stage (default: the start)")
    parser.add_argument("--until", default=None, help="pause after this stage (default: done)")


def quick_span(args: argparse.Namespace) -> None:
    """`--quick`'s runs: from experiment.setup, paused after `QUICK_UNTIL`, unless given."""
    args.stage = args.stage or "experiment.setup"
    args.until = args.until or QUICK_UNTIL


def span_words(stage: str | None, until: str | None) -> str:
    """The `--stage`/`--until` words of a run's command line, as a report shows them."""
    return (f" --stage {stage}" if stage else "") + (f" --until {until}" if until else "")


def end_of(until: str | None) -> str:
    """The status a run ends with when all went well: `paused` after `--until`, else `done`."""
    return "paused" if until else "done"


def ended_done(proc: subprocess.CompletedProcess, label: str, until: str | None = None) -> None:
    """Exit naming `label` unless the `research` command `proc` ended `done` (`paused`, when
    it ran `--until` a stage)."""
    last = (proc.stdout.strip().splitlines() or [""])[-1]
    if proc.returncode != 0 or last != end_of(until):
        raise SystemExit(
            f"{label}: the run did not end {end_of(until)} ({proc.returncode}, {last!r}):\n"
            f"{proc.stderr[-3000:]}"
        )


def timed_auto_run(
    label: str, *extra: str, stage: str | None = None, until: str | None = None
) -> float:
    """Wall seconds of one offline auto run (`research … --mode auto` plus `extra`, from
    `stage`, paused after `until`) in a fresh temporary folder; exits naming `label` when
    the run does not end as asked."""
    folder = Path(tempfile.mkdtemp(prefix="ls-bench-run-"))
    try:
        args = ["research", GOAL, "--mode", "auto", *extra]
        args += ["--stage", stage] if stage else []
        args += ["--until", until] if until else []
        began = time.perf_counter()
        proc = cli(folder / "project", *args)
        wall = time.perf_counter() - began
        ended_done(proc, label, until)
        return wall
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def stage_table(folder: Path, loop_visits: int) -> Path:
    """A copy of the default stage table whose experiment.loop is one plan (its `search` key
    dropped) carried out in up to `loop_visits` visits."""
    import re
    import tomllib

    from lightscientist_jupyter.controller.loader import shipped_stages

    folder = Path(folder)
    shutil.copytree(shipped_stages(), folder, dirs_exist_ok=True)
    toml = folder / "research.toml"
    text = re.sub(r"(?m)^search = .*\n", "", toml.read_text(encoding="utf-8"))
    toml.write_text(text, encoding="utf-8")
    current = tomllib.loads(text)["stages"]["experiment.loop"].get("max_visits", 20)
    if loop_visits > current:
        head, sep, rest = text.partition('[stages."experiment.loop"]')
        block, nxt, tail = rest.partition("\n[")
        block = block.replace(f"max_visits = {current}", f"max_visits = {loop_visits}")
        text = head + sep + block + nxt + tail
        toml.write_text(text, encoding="utf-8")
        assert tomllib.loads(text)["stages"]["experiment.loop"]["max_visits"] == loop_visits
    return toml


def read_events(workspace: Path) -> list[dict[str, Any]]:
    path = Path(workspace) / ".lightscientist" / "events.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def worker_tasks(workspace: Path) -> list[dict[str, Any]]:
    """Every worker's task as the supervisor gave it, in the order the workers were created:
    `{"worker_id", "stage", "message"}` (the message is the worker's `task.md`)."""
    workspace = Path(workspace)
    out = []
    for event in read_events(workspace):
        if event["type"] == "worker.created":
            wid = event["worker_id"]
            task = workspace / ".lightscientist" / "workers" / wid / "task.md"
            out.append(
                {
                    "worker_id": wid,
                    "stage": event["stage"],
                    "message": task.read_text(encoding="utf-8"),
                }
            )
    return out


def strip_process_digest(message: str) -> str:
    """A worker task without its PROCESS.md digest (a single agent has its history instead)."""
    head, sep, _ = message.partition("\n## PROCESS.md (the project so far)")
    return head.rstrip() + "\n" if sep else message


def copy_skills(source_workspace: Path, target_workspace: Path) -> None:
    """The skill files the workers read, at the same paths (`/.lightscientist/skills/…`)."""
    src = Path(source_workspace) / ".lightscientist" / "skills"
    dst = Path(target_workspace) / ".lightscientist" / "skills"
    shutil.copytree(src, dst, dirs_exist_ok=True)


# ----------------------------------------------------------------------------- bare agents


def bare_tools(sleep: bool = True, root: Path | None = None) -> list[Any]:
    """The worker's lifecycle tools for an agent with no layers around it: same names, same
    arguments, same result texts as the package's, but nothing stops the turn.

    - `request_input` is answered at once with the answer the offline supervisor gives;
    - `suspend` sleeps `check_after_s` (where a LightScientist worker is resumed by a
      scheduled resume after that delay) and returns;
    - `submit_job` runs the command in `root` to its end and returns (no layer 2 resumes it);
    - `complete_stage` and `finalize_cancel` only return their texts.
    """
    from langchain_core.tools import tool

    from lightscientist_jupyter.offline.supervisor import answer_for

    @tool
    def request_input(question: str) -> str:
        """Ask the supervisor a question that blocks your work, and wait for the answer.

        Use it only when you cannot reasonably decide yourself.
        """
        return f"Answer from the supervisor: {answer_for(question)}"

    @tool
    def suspend(reason: str, check_after_s: float = 30.0) -> str:
        """Suspend yourself while something runs in the background (e.g. a long command you
        started with `&`). You will be resumed later with a message; your history is kept.
        """
        if sleep:
            time.sleep(max(0.0, float(check_after_s)))
        return f"Suspended ({reason}); you will be resumed in about {check_after_s:g} s."

    @tool
    def submit_job(command: str, name: str, resources: dict | None = None, folder: str = "") -> str:
        """Run a long command as a job (here: in the foreground, to its end)."""
        began = time.perf_counter()
        where = Path(root or ".")
        proc = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=where)
        (where / "jobs").mkdir(exist_ok=True)
        (where / "jobs" / f"{name}.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
        took = time.perf_counter() - began
        return f"Job {name} ended: exit code {proc.returncode} after {took:.1f} s"

    from lightscientist_jupyter.runtime.session.lifecycle import lifecycle_tools

    same = [t for t in lifecycle_tools() if t.name in ("complete_stage", "finalize_cancel")]
    return [request_input, suspend, submit_job, *same]


def bare_agent(root: Path, model: Any, checkpointer: Any, name: str = "bare") -> Any:
    """`create_deep_agent` with the worker's tools (lifecycle, literature, the PDF build and
    the notebooks), system prompt and workspace backend."""
    from deepagents import create_deep_agent
    from langchain.agents.middleware import TodoListMiddleware

    from lightscientist_jupyter.runtime.latex_tools import latex_tools
    from lightscientist_jupyter.runtime.literature_tools import literature_tools
    from lightscientist_jupyter.runtime.models.resolver import offline_library
    from lightscientist_jupyter.runtime.notebook_tools import notebook_tools
    from lightscientist_jupyter.runtime.sandbox.sandbox import WorkspaceBackend
    from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups
    from lightscientist_jupyter.runtime.session.worker_prompt import WORKER_SYSTEM_PROMPT

    groups = ProcessGroups()
    backend = WorkspaceBackend(
        Path(root), worker_id=name, cancel=threading.Event(), groups=groups, timeout=120.0
    )
    tools = [
        *bare_tools(root=Path(root)),
        *literature_tools(Path(root), name, offline_library(model)),
        *latex_tools(Path(root), groups, backend.shell_of),  # the paper's PDF
        *notebook_tools(Path(root), groups, backend.shell_of),
    ]
    return create_deep_agent(
        model,
        tools,
        system_prompt=WORKER_SYSTEM_PROMPT,
        middleware=[TodoListMiddleware()],
        backend=backend,
        checkpointer=checkpointer,
        name=name,
    )


def sqlite_saver(path: Path) -> Any:
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(sqlite3.connect(str(path), check_same_thread=False, timeout=30))
    saver.setup()
    return saver


def make_callback(on_start: Any) -> Any:
    """A callback handler calling `on_start(messages)` at every chat model call."""
    from langchain_core.callbacks import BaseCallbackHandler

    class _Calls(BaseCallbackHandler):
        raise_error = True

        def on_chat_model_start(
            self, serialized: Any, messages: list[list[Any]], **kwargs: Any
        ) -> None:
            on_start(messages[0] if messages else [])

    return _Calls()
