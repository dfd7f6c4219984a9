"""Prompt growth: LightScientist's bounded inputs against one deepagents session that carries
its whole history.

1. **LightScientist.** `lightscientist research GOAL --mode auto` with the offline model and
   `experiment.loop` forced to `--loops` visits (default 50; a copy of the stage table raises
   that stage's `max_visits`). From the event log: the supervisor's input at every decision
   (its first model call after each `supervisor.event`), and every worker's first prompt
   (`worker.created` → `first_prompt_chars`, the task message) and first model input
   (`model.call` → `input_chars`: system prompt + task, as the model receives it).
2. **Single agent.** ONE deepagents session (`create_deep_agent`, the worker's system prompt,
   tools and workspace backend, an in-memory checkpointer) on ONE thread. It is given, one
   user message after another on that thread, the task of every worker the LightScientist run
   started — the same stages in the same order, the same skill files, the goal in every task
   (each worker's `task.md`) — *without* the PROCESS.md digest, which a session holding its
   whole history does not need (keeping it would make the baseline grow faster). The offline
   model reads the first human message of a conversation as its task, so a thin wrapper
   (`SingleThreadOfflineModel`, below) hands the offline model's decision logic only the
   messages from the latest task on; the input *measured* is the full history the graph passes
   to the model (a callback's `on_chat_model_start`, counted with the same `message_chars` as
   the `model.call` events). Sizes are characters of message contents and serialized tool
   calls, not counting tool schemas, on both sides; the offline model reports no token usage
   (tokens are shown where a real model reports them).

    python benchmarks/prompt_growth.py [--loops 50] [--quick] [--json OUT]

Targets: the supervisor's input is flat (largest ≤ 1.2 × median over the run); at the last
stage the single agent's input is ≥ 10 × LightScientist's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from langchain_core.messages import HumanMessage, ToolMessage  # noqa: E402

from lightscientist_jupyter.offline.history import text_of  # noqa: E402
from lightscientist_jupyter.offline.model import OfflineScientistModel  # noqa: E402
from lightscientist_jupyter.runtime.protocol import TASK_TITLE  # noqa: E402
from lightscientist_jupyter.runtime.session.observe import message_chars  # noqa: E402
from lightscientist_jupyter.supervisor.prompts import PROCESS_DIGEST_CHARS  # noqa: E402


class SingleThreadOfflineModel(OfflineScientistModel):
    """The offline model for one thread that receives task after task.

    The offline model decides from the conversation's first human message (its task) and
    the results of its own tool calls. Here the conversation holds every earlier task too, so
    the decision logic is given only the messages from the latest task message on; the graph
    (and the measurement) still passes the whole history. Tool-call ids get the task's number
    so they stay unique in the thread.
    """

    def _generate(
        self,
        messages: list[Any],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Any:
        starts = [
            i
            for i, m in enumerate(messages)
            if isinstance(m, HumanMessage) and text_of(m).startswith(TASK_TITLE)
        ]
        view = messages[starts[-1] :] if starts else messages
        result = super()._generate(view, stop, run_manager, **kwargs)
        message = result.generations[0].message
        for call in message.tool_calls:
            label, _, rest = call["id"].rpartition("__")
            call["id"] = f"{label}__t{len(starts)}_{rest}"
        return result


# ----------------------------------------------------------------------------- LightScientist


def run_lightscientist(folder: Path, loops: int, start: str | None) -> dict[str, Any]:
    toml = C.stage_table(folder / "stages", loops)
    ws = folder / "lightscientist"
    args = [
        "research",
        C.GOAL,
        "--mode",
        "auto",
        "--stages",
        str(toml),
        "--model",
        f"offline:loops={loops}",
    ]
    if start:
        args += ["--stage", start]
    began = time.perf_counter()
    proc = C.cli(ws, *args, timeout=1800)
    wall = time.perf_counter() - began
    C.ended_done(proc, "the LightScientist run")
    state = json.loads((ws / ".lightscientist" / "state.json").read_text())
    log = C.read_events(ws)

    decisions: list[dict[str, Any]] = []
    pending: dict[str, Any] | None = None
    workers: dict[str, dict[str, Any]] = {}
    tokens = 0
    for e in log:
        t, wid = e["type"], e["worker_id"]
        if t == "supervisor.event" and "input_chars" in e["data"]:
            pending = {
                "stage": e["stage"],
                "task_id": e["task_id"],
                "event": e["data"]["event"]["kind"],
                "event_chars": e["data"]["input_chars"],
            }
        elif t == "model.call" and wid == "supervisor" and pending is not None:
            decisions.append({**pending, "input_chars": e["data"]["input_chars"]})
            pending = None
        elif t == "worker.created":
            workers[wid] = {
                "worker_id": wid,
                "stage": e["stage"],
                "task_id": e["task_id"],
                "task_chars": e["data"]["first_prompt_chars"],
                "first_input": None,
                "max_input": 0,
            }
        elif t == "model.call" and wid in workers:
            w = workers[wid]
            if w["first_input"] is None:
                w["first_input"] = e["data"]["input_chars"]
            w["max_input"] = max(w["max_input"], e["data"]["input_chars"])
        elif t == "model.output" and e["data"].get("tokens"):
            tokens += 1
    sup_by_task: dict[str, list[int]] = {}
    for d in decisions:
        sup_by_task.setdefault(d["task_id"], []).append(d["input_chars"])
    return {
        "workspace": ws,
        "wall_s": wall,
        "state": state,
        "decisions": decisions,
        "workers": list(workers.values()),
        "sup_by_task": sup_by_task,
        "calls_with_tokens": tokens,
        "process_md_chars": len((ws / "PROCESS.md").read_text(encoding="utf-8")),
    }


# ----------------------------------------------------------------------------- single agent


def run_single_agent(
    folder: Path, ls: dict[str, Any], loops: int, keep_digest: bool
) -> dict[str, Any]:
    from langgraph.checkpoint.memory import InMemorySaver

    ws = folder / "single-agent"
    ws.mkdir(parents=True)
    C.copy_skills(ls["workspace"], ws)
    tasks = C.worker_tasks(ls["workspace"])
    for task in tasks:
        task["message"] = (
            task["message"] if keep_digest else C.strip_process_digest(task["message"])
        )

    calls: list[dict[str, Any]] = []
    current = {"index": -1}

    def on_start(messages: list[Any]) -> None:
        calls.append(
            {"task": current["index"], "chars": message_chars(messages), "messages": len(messages)}
        )

    agent = C.bare_agent(ws, SingleThreadOfflineModel(loops=loops), InMemorySaver(), name="single")
    config = {
        "configurable": {"thread_id": "single"},
        "recursion_limit": 100_000,
        "callbacks": [C.make_callback(on_start)],
    }
    delivered, began = 0, time.perf_counter()
    for index, task in enumerate(tasks):
        current["index"] = index
        out = agent.invoke({"messages": [HumanMessage(task["message"])]}, config)
        turn = _last_turn(out["messages"])
        if any(isinstance(m, ToolMessage) and m.name == "complete_stage" for m in turn):
            delivered += 1
    wall = time.perf_counter() - began
    final = agent.get_state({"configurable": {"thread_id": "single"}}).values["messages"]

    per_task = []
    for index, task in enumerate(tasks):
        mine = [c for c in calls if c["task"] == index]
        per_task.append(
            {
                "stage": task["stage"],
                "worker_id": task["worker_id"],
                "task_chars": len(task["message"]),
                "first_input": mine[0]["chars"] if mine else 0,
                "max_input": max((c["chars"] for c in mine), default=0),
                "calls": len(mine),
            }
        )
    shrank = [
        i
        for i in range(1, len(calls))
        if calls[i]["messages"] < calls[i - 1]["messages"]
        and calls[i]["task"] == calls[i - 1]["task"]
    ]
    return {
        "wall_s": wall,
        "tasks": per_task,
        "delivered": delivered,
        "calls": len(calls),
        "history_messages": len(final),
        "history_chars": message_chars(final),
        "summarized_at_call": shrank[0] if shrank else None,
    }


def _last_turn(messages: list[Any]) -> list[Any]:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage) and text_of(messages[i]).startswith(TASK_TITLE):
            return messages[i:]
    return messages


# ----------------------------------------------------------------------------- report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=50, help="experiment.loop visits")
    parser.add_argument("--stage", default=None, help="start the run at this stage")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a tiny run: 3 loop visits, starting at experiment.setup",
    )
    parser.add_argument(
        "--keep-digest",
        action="store_true",
        help="give the single agent the PROCESS.md digest in every task too",
    )
    parser.add_argument("--keep", action="store_true", help="keep the workspaces")
    parser.add_argument("--json", help="write the results here (for run_all.py)")
    args = parser.parse_args(argv)
    if args.quick:
        args.loops, args.stage = 3, args.stage or "experiment.setup"

    report = C.Report("Prompt growth")
    folder = Path(tempfile.mkdtemp(prefix="ls-bench-prompt-"))
    try:
        print(
            f"LightScientist run: experiment.loop × {args.loops} "
            f"(from {args.stage or 'the start'}) …",
            flush=True,
        )
        ls = run_lightscientist(folder, args.loops, args.stage)
        visits = ls["state"]["visits"].get("experiment.loop")
        print(
            f"  done in {ls['wall_s']:.1f} s; experiment.loop ran {visits} times; "
            f"{len(ls['workers'])} workers, {len(ls['decisions'])} supervisor decisions",
            flush=True,
        )
        print(
            f"Single agent: one deepagents thread through the same {len(ls['workers'])} tasks …",
            flush=True,
        )
        single = run_single_agent(folder, ls, args.loops, args.keep_digest)
        print(
            f"  done in {single['wall_s']:.1f} s; {single['delivered']}/{len(single['tasks'])} "
            f"tasks delivered (complete_stage called); {single['calls']} model calls",
            flush=True,
        )
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            print(f"(workspaces kept in {folder})")

    decisions = [d["input_chars"] for d in ls["decisions"]]
    med, top = statistics.median(decisions), max(decisions)
    workers, tasks = ls["workers"], single["tasks"]
    assert [w["stage"] for w in workers] == [t["stage"] for t in tasks]
    # the tasks cover the stage visits of state.json's history, in the same order
    visited = [h["to"] for h in ls["state"]["history"] if h["to"] != "done"]
    by_visit = [
        w["stage"]
        for i, w in enumerate(workers)
        if i == 0 or w["task_id"] != workers[i - 1]["task_id"]
    ]
    if by_visit != visited:
        raise SystemExit(f"the workers' stages {by_visit} differ from state.json's {visited}")

    report.say(
        f"Run: `lightscientist research … --mode auto --model offline:loops={args.loops}"
        f"{' --stage ' + args.stage if args.stage else ''}`, experiment.loop visited "
        f"{visits} times, {len(workers)} workers, {len(decisions)} supervisor decisions "
        f"({ls['wall_s']:.1f} s), {len(visited)} stage visits. Single agent: one "
        f"deepagents thread through the same {len(tasks)} worker tasks in the same order "
        f"(the stage order of state.json's history; {single['wall_s']:.1f} s, "
        f"{single['calls']} model calls, {single['delivered']}/{len(tasks)} tasks "
        f"delivered). Sizes in characters (message contents + serialized tool calls, "
        "no tool schemas); tokens: "
        + (
            "reported by the model for some calls, see the events."
            if ls["calls_with_tokens"]
            else "none — the offline model reports no usage."
        )
    )

    # -- the supervisor, by stage
    by_stage: dict[str, list[int]] = {}
    for d in ls["decisions"]:
        by_stage.setdefault(d["stage"], []).append(d["input_chars"])
    report.say(
        "**Supervisor input per decision, by stage** (system prompt + one event; "
        "the event message alone in brackets):"
    )
    event_chars: dict[str, list[int]] = {}
    for d in ls["decisions"]:
        event_chars.setdefault(d["stage"], []).append(d["event_chars"])
    report.table(
        ["stage", "decisions", "min", "median", "max", "event msg max"],
        [
            [
                s,
                len(v),
                C.fmt_int(min(v)),
                C.fmt_int(statistics.median(v)),
                C.fmt_int(max(v)),
                f"[{C.fmt_int(max(event_chars[s]))}]",
            ]
            for s, v in by_stage.items()
        ],
    )
    report.say(
        f"All {len(decisions)} decisions: median {med:,.0f}, largest {top:,.0f} chars "
        f"= {top / med:.2f} × median."
    )

    # -- the workers, by stage
    stages: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for w, t in zip(workers, tasks, strict=False):
        stages.setdefault(w["stage"], []).append((w, t))
    report.say(
        "**Worker first prompts, by stage** (LightScientist: the task message and the "
        "worker's first model input, system prompt included; single agent: its input "
        "when that stage's task arrives):"
    )
    report.table(
        [
            "stage",
            "workers",
            "LS task msg (min–max)",
            "LS 1st input (max)",
            "single 1st input (min–max)",
        ],
        [
            [
                stage,
                len(pairs),
                f"{min(w['task_chars'] for w, _ in pairs):,}–"
                f"{max(w['task_chars'] for w, _ in pairs):,}",
                C.fmt_int(max(w["first_input"] for w, _ in pairs)),
                f"{min(t['first_input'] for _, t in pairs):,}–"
                f"{max(t['first_input'] for _, t in pairs):,}",
            ]
            for stage, pairs in stages.items()
        ],
    )

    # -- first / middle / last
    picks = [("first", 0), ("middle", len(workers) // 2), ("last", len(workers) - 1)]
    rows = []
    for name, i in picks:
        w, t = workers[i], tasks[i]
        sup = ls["sup_by_task"].get(w["task_id"], [0])
        rows.append(
            [
                f"{name} ({i + 1}/{len(workers)})",
                w["stage"],
                C.fmt_int(w["task_chars"]),
                C.fmt_int(w["first_input"]),
                C.fmt_int(max(sup)),
                C.fmt_int(w["max_input"]),
                C.fmt_int(t["first_input"]),
                C.fmt_int(t["max_input"]),
                f"{t['first_input'] / w['first_input']:.1f}×",
            ]
        )
    report.say(
        "**First, middle and last stage** (LightScientist: the worker's task message, "
        "its first model input, the largest supervisor decision of that stage visit, the "
        "worker's largest input in its turn; single agent: its first and largest input "
        "on that stage's task):"
    )
    report.table(
        [
            "stage visit",
            "stage",
            "LS task msg",
            "LS worker 1st input",
            "LS supervisor max",
            "LS worker max",
            "single 1st input",
            "single max",
            "ratio 1st inputs",
        ],
        rows,
    )

    last_w, last_t = workers[-1], tasks[-1]
    ratio = last_t["first_input"] / last_w["first_input"]
    last_ls_max = max(last_w["max_input"], max(ls["sup_by_task"].get(last_w["task_id"], [0])))
    strict = last_t["first_input"] / last_ls_max
    report.say(
        f"At the end ({last_w['stage']}): the single agent starts the stage with "
        f"{last_t['first_input']:,} chars of input, LightScientist's worker with "
        f"{last_w['first_input']:,}: **ratio {ratio:.1f}×**. Against the largest input any "
        f"LightScientist agent had in that stage ({last_ls_max:,} chars, a worker's turn "
        f"once it has written its script), the ratio is {strict:.1f}×."
    )
    if single["summarized_at_call"] is not None:
        report.say(
            f"deepagents' summarization cut the single agent's history at its model call "
            f"{single['summarized_at_call']}."
        )
    else:
        report.say(
            f"deepagents' summarization (trigger ≈170k tokens for a model with no "
            f"profile) never fired: the single agent's final history is "
            f"{single['history_chars']:,} chars in {single['history_messages']} messages."
        )
    first_prompts = [w["task_chars"] for w in workers]
    bound = PROCESS_DIGEST_CHARS + 2500
    report.say(
        f"Worker first prompts (task messages): {min(first_prompts):,}–"
        f"{max(first_prompts):,} chars (bound {bound:,}: PROCESS.md digest "
        f"{PROCESS_DIGEST_CHARS:,} + header); PROCESS.md itself ended at "
        f"{ls['process_md_chars']:,} chars."
    )

    # -- every stage visit
    full = [
        [
            i + 1,
            w["stage"],
            w["worker_id"],
            C.fmt_int(w["task_chars"]),
            C.fmt_int(w["first_input"]),
            C.fmt_int(max(ls["sup_by_task"].get(w["task_id"], [0]))),
            C.fmt_int(t["first_input"]),
            C.fmt_int(t["max_input"]),
        ]
        for i, (w, t) in enumerate(zip(workers, tasks, strict=False))
    ]
    text, md = C.table(
        [
            "#",
            "stage",
            "worker",
            "LS task msg",
            "LS worker 1st input",
            "LS supervisor max",
            "single 1st input",
            "single max",
        ],
        full,
    )
    print("\nEvery worker task, in order:\n" + text, flush=True)
    report.parts.append(
        "<details><summary>Every worker task, in order (click)</summary>\n\n"
        + md
        + "\n\n</details>"
    )

    report.check(
        C.target(
            "supervisor input flat",
            f"largest {top / med:.2f} × median "
            f"({top:,} / {med:,.0f} chars, {len(decisions)} decisions)",
            "≤ 1.2 × median",
            value=top / med,
            limit=1.2,
            higher=False,
            why="the largest decision input carries a bigger event (a worker's "
            "result); see the by-stage table",
        )
    )
    report.check(
        C.target(
            "single-agent / LightScientist input at the end",
            f"{ratio:.1f}× ({strict:.1f}× against LS's largest input in that stage)",
            "≥ 10×",
            value=ratio,
            limit=10,
            higher=True,
            why=f"the single agent's history after {len(tasks)} tasks is "
            f"{last_t['first_input']:,} chars; the run is too short for it to "
            "outgrow LightScientist's worker prompt ten times",
        )
    )
    report.data = {
        "loops": args.loops,
        "visits": visits,
        "decisions": decisions,
        "workers": workers,
        "single": single["tasks"],
        "ratio": ratio,
        "ratio_strict": strict,
        "ls_wall_s": ls["wall_s"],
        "single_wall_s": single["wall_s"],
        "delivered": single["delivered"],
    }
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
