"""Event pipeline: events/s through the bus and the JSONL writer, updates/s through the update
function and the event filter, and the time to read the last 100 events of a large log.

The events are a mix modelled on a real offline run's log (the same types in about the same
proportions, messages and payloads of about the same sizes: mean line ≈ 400 bytes). Each
figure is the median of `--reps` repetitions.

    python benchmarks/events.py [--events 200000] [--size 1G] [--reps 5] [--quick] [--json OUT]

`--size` is the size of the generated log for `read_tail` (in a temporary folder, deleted
afterwards; the script checks the free disk space first). Targets: ≥ 100,000 events/s through
`EventBus` + `JsonlWriter`; the last 100 events of a 1 GB log in under 50 ms.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

from lightscientist_jupyter.events import EventBus, JsonlWriter, make_filter, read_tail  # noqa: E402
from lightscientist_jupyter.events.event import Event  # noqa: E402
from lightscientist_jupyter.events.jsonl import _encode  # noqa: E402
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord  # noqa: E402
from lightscientist_jupyter.runtime.types import Progress, WorkerUpdate  # noqa: E402
from lightscientist_jupyter.supervisor.updates import apply_update, filter_update  # noqa: E402

ARGS = (
    '{"file_path": "/experiment/run_experiment.py", "content": "import argparse, csv, json\\n'
    "import numpy as np\\n\\ndef train(seed, warmup, lr):\\n    rng = np.random.default_rng("
    'seed)\\n    ...\\n"}'
)
RESULT = (
    "batch 3 of 4: 6 runs, 18 epochs each; final loss 0.4121 (warmup) vs 0.4377 "
    "(constant lr); wrote experiment/results.csv (+6 rows) and experiment/log.md. "
)
STAGE, TASK = "experiment.loop", "experiment.loop#3"


def mix() -> list[tuple[str, str, str | None, dict[str, Any]]]:
    """(type, message, worker_id, data) × 100, in a real run's proportions."""
    out: list[tuple[str, str, str | None, dict[str, Any]]] = []

    def add(n: int, type_: str, message: str, worker: str | None, data: dict[str, Any]) -> None:
        out.extend([(type_, message, worker, data)] * n)

    add(
        19,
        "model.call",
        "model call 4 (9145 chars in 7 messages)",
        "w12",
        {"call": 4, "input_chars": 9145, "messages": 7},
    )
    add(
        19,
        "model.output",
        "→ execute",
        "w12",
        {
            "text": "",
            "tool_calls": [
                {
                    "name": "execute",
                    "args": '{"command": "python '
                    'experiment/run_experiment.py --batches 4 --batch 3"}',
                }
            ],
        },
    )
    add(
        15,
        "tool.call",
        f"write_file({ARGS[:160]})",
        "w12",
        {"tool": "write_file", "args": (ARGS * 3)[:240]},
    )
    add(
        15,
        "tool.result",
        f"execute → {RESULT[:160]}",
        "w12",
        {"tool": "execute", "result": (RESULT * 4)[:330]},
    )
    add(
        7,
        "session.start",
        "started (worker, stage experiment.loop)",
        "w12",
        {"resumed": False, "role": "worker"},
    )
    add(7, "session.end", "turn ended: completed", "w12", {"status": "completed"})
    add(
        4,
        "supervisor.event",
        "worker_finished (w12)",
        None,
        {
            "event": {
                "kind": "worker_finished",
                "task_id": TASK,
                "worker_id": "w12",
                "data": {
                    "label": "",
                    "stage": STAGE,
                    "result": {
                        "kind": "complete_stage",
                        "summary": RESULT[:60],
                        "outputs": ["experiment/results.csv", "experiment/log.md"],
                        "next_stage": "experiment.loop",
                    },
                },
                "at": 1796003925.03,
            },
            "input_chars": 460,
        },
    )
    add(
        4,
        "supervisor.decision",
        "done — done",
        None,
        {"reply": "done", "text": "done", "event": "worker_finished"},
    )
    add(
        3,
        "worker.status",
        "w12: running → completed",
        "w12",
        {"from": "running", "to": "completed"},
    )
    add(
        2,
        "worker.created",
        "w12 started on experiment.loop",
        "w12",
        {"label": "", "instructions": "", "first_prompt_chars": 3339},
    )
    add(2, "stage.start", "experiment.loop (visit 3)", None, {"visit": 3, "skill": "skills/x.md"})
    add(
        2,
        "stage.finish",
        f"experiment.loop finished: {RESULT[:120]}",
        None,
        {
            "summary": RESULT,
            "outputs": ["experiment/results.csv", "experiment/log.md"],
            "next_stage": "experiment.loop",
        },
    )
    add(
        1,
        "stage.transition",
        "experiment.loop → experiment.loop",
        None,
        {"from": STAGE, "to": STAGE, "by": "finish"},
    )
    return out


MIX = mix()


def make_event(seq: int, item: tuple[str, str, str | None, dict[str, Any]]) -> Event:
    type_, message, worker, data = item
    return Event(
        seq=seq,
        ts=round(time.time(), 6),
        layer=1,
        type=type_,
        message=message,
        task_id=TASK,
        worker_id=worker,
        stage=STAGE,
        data=data,
    )


def rate(n: int, seconds: float) -> float:
    return n / seconds if seconds > 0 else float("inf")


# ----------------------------------------------------------------------------- events/s


def bench_bus_writer(folder: Path, n: int) -> tuple[float, float]:
    """Events/s through `EventBus.emit` with a `JsonlWriter` subscribed (the real setup), and
    the share of one CPU the process got meanwhile (below 1: other processes took the rest)."""
    path = folder / "bus.jsonl"
    writer = JsonlWriter(path)
    bus = EventBus(next_seq=writer.next_seq)
    bus.subscribe(writer)
    items = [MIX[i % len(MIX)] for i in range(n)]
    emit = bus.emit
    cpu, began = time.process_time(), time.perf_counter()
    for type_, message, worker, data in items:
        emit(type_, message, worker_id=worker, stage=STAGE, task_id=TASK, data=data)
    seconds = time.perf_counter() - began
    cpu = time.process_time() - cpu
    writer.close()
    path.unlink()
    return rate(n, seconds), (cpu / seconds if seconds > 0 else 1.0)


def bench_writer(folder: Path, n: int) -> float:
    """Events/s through `JsonlWriter.write` alone (events already built)."""
    path = folder / "writer.jsonl"
    writer = JsonlWriter(path)
    events = [make_event(i + 1, MIX[i % len(MIX)]) for i in range(n)]
    began = time.perf_counter()
    for event in events:
        writer.write(event)
    seconds = time.perf_counter() - began
    writer.close()
    path.unlink()
    return rate(n, seconds)


def bench_parts(folder: Path, n: int) -> dict[str, float]:
    """µs per event of each part: building and numbering it (the bus with no subscriber),
    encoding it, and one `os.write` of the encoded line."""
    bus = EventBus()
    items = [MIX[i % len(MIX)] for i in range(n)]
    began = time.perf_counter()
    for type_, message, worker, data in items:
        bus.emit(type_, message, worker_id=worker, stage=STAGE, task_id=TASK, data=data)
    emit_us = 1e6 * (time.perf_counter() - began) / n
    events = [make_event(i + 1, item) for i, item in enumerate(items)]
    began = time.perf_counter()
    lines = [_encode(e) for e in events]
    encode_us = 1e6 * (time.perf_counter() - began) / n
    fd = os.open(folder / "raw.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    began = time.perf_counter()
    for line in lines:
        os.write(fd, line)
    write_us = 1e6 * (time.perf_counter() - began) / n
    os.close(fd)
    os.unlink(folder / "raw.jsonl")
    return {
        "emit_us": emit_us,
        "encode_us": encode_us,
        "write_us": write_us,
        "line_bytes": sum(map(len, lines)) / n,
    }


# ----------------------------------------------------------------------------- updates/s


def bench_updates(n: int) -> tuple[float, int]:
    """Updates/s through `apply_update` then `filter_update`, and how many became events.

    Nine in ten updates are running → running progress; the rest cycle through background,
    running, waiting, running, completed, as a worker's life does."""
    record = WorkerRecord(id="w12", task_id=TASK, stage=STAGE, updated_at=time.time())
    cycle = ("background", "running", "waiting", "running", "completed", "running")
    updates, now = [], time.time()
    for i in range(n):
        status = "running" if i % 10 else cycle[(i // 10) % len(cycle)]
        updates.append(
            WorkerUpdate(
                worker_id="w12",
                status=status,
                progress=Progress(model_calls=i, tool_calls=i // 2, steps=2 * i, input_chars=9000),
                stage=STAGE,
                task_id=TASK,
                result={"kind": "complete_stage", "summary": RESULT}
                if status == "completed"
                else None,
                question="budget?" if status == "waiting" else None,
                check_after_s=1.0 if status == "background" else None,
                at=now + i,
            )
        )
    events = 0
    began = time.perf_counter()
    for update in updates:
        after = apply_update(record, update)
        if filter_update(record, after) is not None:
            events += 1
        record = after
    return rate(n, time.perf_counter() - began), events


# ----------------------------------------------------------------------------- read_tail


def parse_size(text: str) -> int:
    text = text.strip().upper().removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(float(text.rstrip("KMG")) * scale)


def write_log(path: Path, size: int) -> int:
    """A log of about `size` bytes of the mix, seq 1, 2, …; returns the number of events."""
    templates = []
    for i, item in enumerate(MIX):
        line = _encode(dataclasses.replace(make_event(10**9, item), ts=1796003925.123456 + i))
        head, _, tail = line.partition(b'"seq":1000000000')
        templates.append((head + b'"seq":', tail))
    seq, written = 1, 0
    block = 20_000
    with open(path, "wb") as fh:
        while written < size:
            lines = []
            for i in range(block):
                head, tail = templates[(seq + i) % len(templates)]
                lines.append(head + str(seq + i).encode() + tail)
            chunk = b"".join(lines)
            if written + len(chunk) > size:  # the last block: only the lines that fit
                keep, total = [], written
                for line in lines:
                    if total + len(line) > size and keep:
                        break
                    keep.append(line)
                    total += len(line)
                chunk, lines = b"".join(keep), keep
            fh.write(chunk)
            written += len(chunk)
            seq += len(lines)
    return seq - 1


def drop_cache(path: Path) -> bool:
    """Ask the kernel to forget the file's cached pages (so the next read goes to disk)."""
    if not hasattr(os, "posix_fadvise"):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def bench_tail(folder: Path, size: int, reps: int) -> dict[str, Any]:
    free = shutil.disk_usage(folder).free
    if free < size * 1.2 + (1 << 30):
        return {
            "skipped": f"only {C.fmt_bytes(free)} free in {folder}; the log needs "
            f"{C.fmt_bytes(size)} plus room"
        }
    path = folder / "big.jsonl"
    try:
        began = time.perf_counter()
        count = write_log(path, size)
        gen_s = time.perf_counter() - began
        actual = path.stat().st_size
        cold = []
        for _ in range(3):
            dropped = drop_cache(path)
            began = time.perf_counter()
            out = read_tail(path, 100)
            cold.append(1000 * (time.perf_counter() - began))
        assert len(out) == 100 and out[-1]["seq"] == count, (len(out), out[-1]["seq"], count)
        warm = []
        for _ in range(max(reps, 5) * 4):
            began = time.perf_counter()
            read_tail(path, 100)
            warm.append(1000 * (time.perf_counter() - began))
        keep = make_filter(type="worker.created")
        filtered = []
        for _ in range(max(reps, 3)):
            began = time.perf_counter()
            got = read_tail(path, 100, keep)
            filtered.append(1000 * (time.perf_counter() - began))
        assert got and all(e["type"] == "worker.created" for e in got)
        return {
            "bytes": actual,
            "events": count,
            "gen_s": gen_s,
            "cold_ms": cold,
            "cold_dropped": dropped,
            "warm_ms": warm,
            "filtered_ms": filtered,
        }
    finally:
        path.unlink(missing_ok=True)


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000, help="events per repetition")
    parser.add_argument("--size", default="1G", help="size of the log for read_tail (1G, 100M…)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="tiny: 2,000 events, a 2 MB log")
    parser.add_argument("--json", help="write the results here (for run_all.py)")
    args = parser.parse_args(argv)
    if args.quick:
        args.events, args.size, args.reps = 2000, "2M", 2
    size = parse_size(args.size)

    report = C.Report("Event pipeline")
    folder = Path(tempfile.mkdtemp(prefix="ls-bench-events-"))
    try:
        n = args.events
        bus_rates, writer_rates, update_rates, parts, shares = [], [], [], [], []
        load_before = os.getloadavg()[0]
        for rep in range(args.reps):
            r, share = bench_bus_writer(folder, n)
            bus_rates.append(r)
            shares.append(share)
            writer_rates.append(bench_writer(folder, n))
            parts.append(bench_parts(folder, min(n, 50_000)))
            r, events = bench_updates(n)
            update_rates.append(r)
            print(
                f"  rep {rep + 1}/{args.reps}: bus+writer {bus_rates[-1]:,.0f}/s, writer "
                f"{writer_rates[-1]:,.0f}/s, updates {update_rates[-1]:,.0f}/s",
                flush=True,
            )
        print(f"read_tail: writing a {C.fmt_bytes(size)} log in {folder} …", flush=True)
        tail = bench_tail(folder, size, args.reps)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    part = {k: C.median([p[k] for p in parts]) for k in parts[0]}
    bus_rate, share = C.median(bus_rates), C.median(shares)
    per_cpu = C.median([r / max(sh, 1e-9) for r, sh in zip(bus_rates, shares, strict=True)])
    report.say(
        f"{n:,} events per repetition, {args.reps} repetitions, medians; the mix of "
        f"a real run's log, mean line {part['line_bytes']:.0f} bytes."
    )
    report.table(
        ["what", "median", "min", "max"],
        [
            [
                "events/s: EventBus.emit → JsonlWriter (one os.write per event)",
                f"{bus_rate:,.0f}/s",
                f"{min(bus_rates):,.0f}/s",
                f"{max(bus_rates):,.0f}/s",
            ],
            [
                "events/s: JsonlWriter.write alone (events prebuilt)",
                f"{C.median(writer_rates):,.0f}/s",
                f"{min(writer_rates):,.0f}/s",
                f"{max(writer_rates):,.0f}/s",
            ],
            [
                "updates/s: apply_update + filter_update",
                f"{C.median(update_rates):,.0f}/s",
                f"{min(update_rates):,.0f}/s",
                f"{max(update_rates):,.0f}/s",
            ],
        ],
    )
    part_sum = sum(part[k] for k in ("emit_us", "encode_us", "write_us"))
    report.say(
        f"Per event: building and numbering it in the bus {part['emit_us']:.1f} µs, "
        f"encoding the line {part['encode_us']:.1f} µs, one os.write "
        f"{part['write_us']:.1f} µs (sum {part_sum:.1f} µs "
        f"against the {1e6 / bus_rate:.1f} µs measured end to end). Of the updates, "
        f"{events:,} of {n:,} became scheduling events."
    )
    report.say(
        f"While the bus and writer were measured, this single-threaded process got "
        f"{100 * share:.0f}% of a CPU (median; load average {load_before:.2f} before); "
        f"per CPU-second it wrote {per_cpu:,.0f} events. A share well under 100% means "
        "other processes were running on the 2 cores."
    )
    report.check(
        C.target(
            "events/s through EventBus + JsonlWriter",
            f"{bus_rate:,.0f}/s",
            "≥ 100,000/s",
            value=bus_rate,
            limit=100_000,
            higher=True,
            why=(
                f"the process had only {100 * share:.0f}% of a CPU during the "
                f"measurement (per CPU-second: {per_cpu:,.0f} events): the "
                "machine was busy with other work; "
                if share < 0.9
                else ""
            )
            + f"an event costs {1e6 / bus_rate:.1f} µs: building it "
            f"{part['emit_us']:.1f}, encoding {part['encode_us']:.1f} (the C "
            f"JSON encoder on a {part['line_bytes']:.0f}-byte line), os.write "
            f"{part['write_us']:.1f}; each line is written whole by its own "
            "os.write before emit returns, so there is no batching to amortize "
            "the syscall",
        )
    )
    report.data = {
        "bus_rates": bus_rates,
        "cpu_shares": shares,
        "per_cpu": per_cpu,
        "writer_rates": writer_rates,
        "update_rates": update_rates,
        "parts": part,
        "tail": tail,
    }

    if "skipped" in tail:
        report.say(f"read_tail: skipped — {tail['skipped']}")
    else:
        cold, warm = C.median(tail["cold_ms"]), C.median(tail["warm_ms"])
        report.say(
            f"read_tail on a {C.fmt_bytes(tail['bytes'])} log of {tail['events']:,} "
            f"events (written in {tail['gen_s']:.1f} s, deleted afterwards):"
        )
        report.table(
            ["read", "median", "max"],
            [
                [
                    "last 100 events, page cache dropped (posix_fadvise DONTNEED)"
                    if tail["cold_dropped"]
                    else "last 100 events, first reads",
                    f"{cold:.2f} ms",
                    f"{max(tail['cold_ms']):.2f} ms",
                ],
                ["last 100 events, warm", f"{warm:.2f} ms", f"{max(tail['warm_ms']):.2f} ms"],
                [
                    "last 100 worker.created events (~2% of lines; filter while reading)",
                    f"{C.median(tail['filtered_ms']):.2f} ms",
                    f"{max(tail['filtered_ms']):.2f} ms",
                ],
            ],
        )
        worst = max(cold, warm)
        label = f"{C.fmt_bytes(tail['bytes'])} log"
        report.check(
            C.target(
                f"last 100 events of a {label}",
                f"{cold:.2f} ms cold, {warm:.2f} ms warm",
                "< 50 ms",
                value=worst,
                limit=50,
                higher=False,
                why="read_tail reads 64 KB blocks backwards from the end",
            )
        )
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
