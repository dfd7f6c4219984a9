"""Every worker of a runtime runs one shared graph (runtime/session/graphs.py), bound to it for its
turns: two workers running at once keep their own shell, jobs, stop flag and history.

The model is the real `ChatOpenAI` client against the scripted local server; it answers each
worker from its own messages."""

from __future__ import annotations

import json
from typing import Any

from support.runtime import answer, finish, tool_call
from support.waiting import wait_for

from lightscientist_jupyter.runtime.types import WorkerSpec


def _worker_name(body: dict[str, Any]) -> str:
    task = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return task.split("you are worker ", 1)[1].split(".")[0]


def play_two_workers(body: dict[str, Any]) -> dict[str, Any]:
    """Each worker runs one slow command, submits one job, then delivers; a worker told it
    is being cancelled finalizes."""
    name = _worker_name(body)
    messages = body["messages"]
    results = [m for m in messages if m["role"] == "tool"]
    if any(m["role"] == "user" and "being cancelled" in m["content"] for m in messages):
        return tool_call("finalize_cancel", notes=f"{name} stopped")
    if not results:
        return tool_call(
            "execute", command=f"echo $HOME > home-{name}.txt && sleep 1.5 && echo ran-{name}"
        )
    if len(results) == 1:
        job = {"command": f"echo job-of-{name}", "name": f"job-{name}"}
        return {"tool": "submit_job", "args": job}  # (`tool_call` has a `name` of its own)
    if len(results) == 2:
        return tool_call(
            "complete_stage", summary=f"{name} done", outputs=[f"home-{name}.txt"], next_stage=""
        )
    return answer("done")


def test_two_workers_at_once_keep_their_own_shell_jobs_and_stop_flag(
    chat_server, chat_model, make_runtime, ws
):
    chat_server.answer_with(play_two_workers)
    runtime = make_runtime(chat_model, retries=0)
    first = runtime.start(WorkerSpec(message="you are worker alpha.", stage="s", task_id="s#1"))
    second = runtime.start(WorkerSpec(message="you are worker beta.", stage="s", task_id="s#1"))
    assert runtime.attach(first).graph is runtime.attach(second).graph  # one graph for both

    # both are in their slow command at once; cancelling beta stops its command only
    wait_for(
        lambda: (ws.root / "home-alpha.txt").exists() and (ws.root / "home-beta.txt").exists(),
        "both workers in their first command",
    )
    cancelled = runtime.cancel(second, timeout=20).to_dict()
    assert cancelled["status"] == "cancelled"
    assert cancelled["result"] == {"kind": "finalize_cancel", "notes": "beta stopped"}

    record = finish(runtime, first)  # alpha went on: its job put it in background
    assert record["status"] == "background"
    (job_id,) = record["jobs"]
    # (an echo; the wait is long for a full suite on two busy cores, where it once took > 10 s)
    wait_for(lambda: not runtime.jobs.get(job_id).running, "alpha's job to end", within=60)
    job = runtime.jobs.get(job_id)
    assert (job.worker_id, job.name, job.exit_code) == (first, "job-alpha", 0)
    assert runtime.get(second).jobs == ()  # beta never got that far

    runtime.resume(first, message="your job ended")
    record = finish(runtime, first)
    assert record["status"] == "completed" and record["result"]["summary"] == "alpha done"

    # each worker's command ran with its own $HOME and is logged in its own folder
    for worker, name in ((first, "alpha"), (second, "beta")):
        home = (ws.root / f"home-{name}.txt").read_text().strip()
        assert home.endswith(f".lightscientist/workers/{worker}/home"), home
    alpha_log = (ws.workers_dir / first / "commands" / "0001.log").read_text()
    beta_log = (ws.workers_dir / second / "commands" / "0001.log").read_text()
    assert "ran-alpha" in alpha_log and "ran-beta" not in beta_log  # beta's sleep was stopped

    # and each session's model input held its own messages only
    for name, other in (("alpha", "beta"), ("beta", "alpha")):
        seen = json.dumps([b["messages"] for b in chat_server.requests if _worker_name(b) == name])
        assert f"worker {name}" in seen and f"-{other}" not in seen
