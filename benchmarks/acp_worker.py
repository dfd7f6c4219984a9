"""An ACP worker's start-up cost: from nothing to an agent ready for its prompt.

Starts the tests' fake ACP agent (`tests/support/fake_acp_agent.py`, a Python program on
`agent-client-protocol`, as a real agent would be a Node or Rust one) `--runs` times in a
fresh workspace, unsandboxed and in the run's bubblewrap sandbox (as `AgentWorkerSession`
does): the start (its process spawned, `initialize`, `session/new`), one prompt turn writing
one file, and the close (its process group ended); and, where pasta and nftables work, in
the sandbox with a network of its own (`network = true`: the handshake, the nftables table
and pasta before its program starts). The first start of each mode is left out (the page
cache). A real agent's start is its own program's: this measures ours around it.

    python benchmarks/acp_worker.py [--runs 7] [--quick] [--json OUT]

Target (issue 40): the sandbox adds at most 0.2 s to an agent's start.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

from lightscientist_jupyter.runtime.acp.launch import agent_sandbox  # noqa: E402
from lightscientist_jupyter.runtime.acp.session import AcpSession  # noqa: E402
from lightscientist_jupyter.runtime.sandbox import bwrap, netstack  # noqa: E402
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy  # noqa: E402
from lightscientist_jupyter.values.agents import AgentSpec  # noqa: E402
from lightscientist_jupyter.vocab import AgentPermissions  # noqa: E402

FAKE = Path(__file__).resolve().parents[1] / "tests" / "support" / "fake_acp_agent.py"
SPEC = AgentSpec("fake", (sys.executable, str(FAKE)), (), AgentPermissions.ALLOW)
TASK = 'LightScientist task\noutputs: ["out/a.md"]\n'


def once(folder: Path, mode: str) -> dict[str, float]:
    ws = folder / "ws"
    home = ws / ".lightscientist" / "workers" / "w1" / "home"
    home.mkdir(parents=True)
    policy = ShellPolicy(sandbox=mode != "none", network=mode == "bwrap+net")
    sandbox = agent_sandbox(SPEC, policy, ws, home)
    began = time.perf_counter()
    session = AcpSession(
        SPEC, ws, home=home, log=folder / "agent.log", emit=lambda *a: None, sandbox=sandbox
    )
    try:
        session.start()
        started = time.perf_counter()
        turn = session.prompt(TASK)
        prompted = time.perf_counter()
    finally:
        session.close()
    closed = time.perf_counter()
    if turn.stop_reason != "end_turn" or not (ws / "out" / "a.md").is_file():
        raise SystemExit(f"the agent's turn ended {turn.stop_reason} without its file")
    return {
        "start_s": started - began,
        "turn_s": prompted - started,
        "close_s": closed - prompted,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="starts per mode (7)")
    parser.add_argument("--quick", action="store_true", help="tiny: two starts per mode")
    parser.add_argument("--json", default=None, help="write the report here")
    args = parser.parse_args(argv)
    runs = 2 if args.quick else max(2, args.runs)
    modes = ["none"]
    if bwrap.problem() is None:
        modes.append("bwrap")
        if netstack.problem(shutil.which("bwrap") or "bwrap") is None:
            modes.append("bwrap+net")
    folder = Path(tempfile.mkdtemp(prefix="ls-bench-acp-"))
    results: dict[str, list[dict[str, float]]] = {}
    try:
        for mode in modes:
            timed = [once(folder / f"{mode}-{i}", mode) for i in range(runs)]
            results[mode] = timed[1:]
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    report = C.Report("ACP worker start-up")
    report.say(
        f"The fake ACP agent (Python, agent-client-protocol) started {runs} times per mode, "
        "the first left out; medians. Start: its process spawned, `initialize` and "
        "`session/new` answered. Turn: one prompt writing one file. Close: its group ended."
        + ("" if "bwrap" in results else f" No sandbox here: {bwrap.problem()}.")
    )
    rows: list[list[Any]] = []
    med: dict[str, dict[str, float]] = {}
    for mode, timed in results.items():
        med[mode] = {k: C.median([t[k] for t in timed]) for k in ("start_s", "turn_s", "close_s")}
        rows.append(
            [
                mode,
                len(timed),
                f"{med[mode]['start_s'] * 1000:.0f} ms",
                f"{med[mode]['turn_s'] * 1000:.0f} ms",
                f"{med[mode]['close_s'] * 1000:.0f} ms",
            ]
        )
    report.table(["sandbox", "starts", "start", "one turn", "close"], rows)
    if "bwrap" in med:
        added = med["bwrap"]["start_s"] - med["none"]["start_s"]
        report.check(
            C.target(
                "the sandbox's cost in an agent's start",
                f"{added * 1000:+.0f} ms ({med['bwrap']['start_s'] * 1000:.0f} ms against "
                f"{med['none']['start_s'] * 1000:.0f} ms)",
                "≤ 200 ms",
                value=added * 1000,
                limit=200,
                higher=False,
                why="bubblewrap's namespaces and mounts before the agent's own start",
            )
        )
    if "bwrap+net" in med:
        network = med["bwrap+net"]["start_s"] - med["bwrap"]["start_s"]
        report.say(
            f"A network of its own (`network = true`) adds {network * 1000:+.0f} ms to the "
            "sandboxed start (the nftables table and pasta attached before the agent runs)."
        )
    report.data = results
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
