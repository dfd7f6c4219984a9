"""Latency of a trivial cell while a LightScientist run streams events into the dashboard.

Starts a real IPython kernel (jupyter_client), runs

    %load_ext lightscientist_jupyter
    %lightscientist research "…" --mode auto      (the offline model)

in an empty folder, then executes `1 + 1` over and over while the run goes on, timing each
from the execute request to its reply. Every IOPub message is counted as well (what the
front end would receive), to show the dashboard's batching at work.

    python benchmarks/cell_latency.py [--extra-events-per-s N] [--interval S]

`--extra-events-per-s` adds synthetic `tool.result` events to the run's event bus from a
kernel thread (a heavier stream than the offline model's ~100 events/s). Target: p95 ≤ 100 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter

from _common import percentile
from jupyter_client.manager import KernelManager

GOAL = "Does learning-rate warmup help a small MLP?"
INJECT = """
import threading, time
from lightscientist_jupyter import api
def _inject(rate={rate}):
    run = api.current()
    n = 0
    while run is not None and run.alive:
        for _ in range(max(1, rate // 100)):
            run.project.bus.emit("tool.result", f"synthetic {{n}}", worker_id="bench",
                                 stage=run.controller.stage)
            n += 1
        time.sleep(0.01)
threading.Thread(target=_inject, daemon=True).start()
"""


def execute(kc, code: str, timeout: float = 60.0, **expressions: str) -> tuple[float, dict]:
    """Run `code`; returns (seconds to the execute_reply, the reply's content)."""
    started = time.perf_counter()
    msg_id = kc.execute(code, store_history=False, user_expressions=expressions)
    while True:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return time.perf_counter() - started, reply["content"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extra-events-per-s", type=int, default=0)
    parser.add_argument(
        "--interval", type=float, default=0.05, help="pause between two trivial cells (s)"
    )
    parser.add_argument("--max-samples", type=int, default=2000)
    args = parser.parse_args(argv)

    folder = tempfile.mkdtemp(prefix="ls-latency-")
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=folder)
    kc = km.client()
    kc.start_channels()
    iopub: Counter[int] = Counter()
    kinds: Counter[str] = Counter()
    stop = threading.Event()

    def drain() -> None:  # a front end reads IOPub; so do we, counting per second
        while not stop.is_set():
            try:
                msg = kc.get_iopub_msg(timeout=0.2)
            except Exception:  # noqa: BLE001 - queue.Empty
                continue
            iopub[int(time.monotonic())] += 1
            kinds[msg["msg_type"]] += 1

    try:
        kc.wait_for_ready(timeout=60)
        threading.Thread(target=drain, daemon=True).start()
        execute(kc, "%load_ext lightscientist_jupyter")
        research_s, reply = execute(kc, f'%lightscientist research "{GOAL}" --mode auto')
        assert reply["status"] == "ok", reply
        if args.extra_events_per_s:
            execute(kc, INJECT.format(rate=args.extra_events_per_s))
        samples: list[float] = []
        started = time.monotonic()
        alive = "__import__('lightscientist_jupyter.api').api.current() is not None"
        while len(samples) < args.max_samples:
            seconds, reply = execute(kc, "1 + 1")
            assert reply["status"] == "ok", reply
            samples.append(seconds)
            if len(samples) % 20 == 0:  # stop sampling when the run has ended
                _, check = execute(kc, "pass", alive=alive)
                if check["user_expressions"]["alive"]["data"]["text/plain"] != "True":
                    break
            time.sleep(args.interval)
        run_s = time.monotonic() - started
        _, final = execute(
            kc, "pass", status="__import__('lightscientist_jupyter.api').api.status()['status']"
        )
        status = final["user_expressions"]["status"]["data"]["text/plain"]
    finally:
        stop.set()
        kc.stop_channels()
        km.shutdown_kernel(now=True)

    rates = list(iopub.values())[1:-1] or list(iopub.values())
    ms = [s * 1000 for s in samples]
    print(f"research magic returned in {research_s * 1000:.0f} ms; the run ended {status}")
    print(
        f"trivial cell while the run streamed ({len(ms)} samples over {run_s:.1f} s"
        + (f", +{args.extra_events_per_s} synthetic events/s" if args.extra_events_per_s else "")
        + "):"
    )
    print(
        f"  p50 {statistics.median(ms):.1f} ms   p95 {percentile(ms, 95):.1f} ms   "
        f"max {max(ms):.1f} ms"
    )
    print(
        f"IOPub messages: mean {statistics.mean(rates):.1f}/s, max {max(rates)}/s, most of "
        f"them the trivial cells' own; the dashboard's widget messages (comm_msg): "
        f"{kinds['comm_msg']} in {run_s:.1f} s = {kinds['comm_msg'] / run_s:.1f}/s"
    )
    verdict = "OK" if percentile(ms, 95) <= 100 else "ABOVE TARGET"
    print(f"target p95 <= 100 ms: {verdict}")
    return 0 if verdict == "OK" else 1


if __name__ == "__main__":
    sys.exit(main())
