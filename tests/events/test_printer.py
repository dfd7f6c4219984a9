"""TerminalPrinter: one readable line per event, layer and type columns aligned."""

from __future__ import annotations

import io
import re
import time

from lightscientist_jupyter.events import EVENT_TYPES, EventBus, TerminalPrinter, format_line


def raw(
    type_: str,
    message: str = "msg",
    *,
    stage: str | None = "idea.survey",
    worker: str | None = None,
    ts: float = 1_700_000_000.0,
) -> dict:
    return {
        "v": 1,
        "seq": 1,
        "ts": ts,
        "layer": EVENT_TYPES.get(type_, 0),
        "type": type_,
        "message": message,
        "task_id": None,
        "worker_id": worker,
        "stage": stage,
        "data": {},
    }


def test_line_starts_with_clock_layer_and_type():
    ts = 1_700_000_000.0
    line = format_line(raw("stage.start", "go", ts=ts))
    clock = time.strftime("%H:%M:%S", time.localtime(ts))
    assert line.startswith(f"{clock}  L1 stage.start ")
    assert line.endswith("go")


def test_columns_are_aligned_across_the_whole_vocabulary():
    lines = [
        format_line(raw(t, "MESSAGE", stage="paper.review", worker="w-12")) for t in EVENT_TYPES
    ]
    type_at = {line.index(t) for line, t in zip(lines, EVENT_TYPES, strict=True)}
    stage_at = {line.index("paper.review") for line in lines}
    worker_at = {line.index("w-12") for line in lines}
    message_at = {line.index("MESSAGE") for line in lines}
    layer_at = {line.index(" L") for line in lines}
    for positions in (type_at, stage_at, worker_at, message_at, layer_at):
        assert len(positions) == 1, positions
    for line, t in zip(lines, EVENT_TYPES, strict=True):
        assert f"L{EVENT_TYPES[t]} {t} " in line  # never glued to the next column


def test_columns_stay_aligned_without_stage_or_worker():
    full = format_line(raw("tool.call", "MESSAGE", stage="idea.survey", worker="w-1"))
    bare = format_line(raw("tool.call", "MESSAGE", stage=None, worker=None))
    assert full.index("MESSAGE") == bare.index("MESSAGE")


def test_long_values_stay_separated():
    line = format_line(
        raw("stage.start", "MESSAGE", stage="experiment.analyze_again", worker="worker-123456")
    )
    assert "experiment.analyze_again " in line
    assert "worker-123456 " in line


def test_one_line_even_for_multiline_messages_and_cut_to_width():
    line = format_line(raw("model.output", "first line\nsecond\tline  " + "x" * 500))
    assert "\n" not in line and "first line second line x" in line
    assert len(line) == 140 and line.endswith("…")
    assert len(format_line(raw("model.output", "y" * 500), width=80)) == 80


def test_color_wraps_the_line_in_one_colour_per_layer():
    colours = {}
    for type_ in ("stage.start", "worker.status", "tool.call"):
        plain = format_line(raw(type_))
        colored = format_line(raw(type_), color=True)
        code = re.fullmatch(r"(\033\[[0-9;]+m)(.*)\033\[0m", colored, re.DOTALL)
        assert code is not None and code.group(2) == plain, repr(colored)
        colours[EVENT_TYPES[type_]] = code.group(1)
    assert len(set(colours.values())) == 3, colours  # the three layers read apart


def test_printer_writes_one_line_per_event():
    stream = io.StringIO()
    bus = EventBus()
    bus.subscribe(TerminalPrinter(stream))
    bus.emit("stage.start", "idea.survey (visit 1)", stage="idea.survey")
    bus.emit("worker.created", "created", worker_id="w-1", stage="idea.survey")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and stream.getvalue().endswith("\n")
    assert "L1 stage.start" in lines[0] and "idea.survey (visit 1)" in lines[0]
    assert "L2 worker.created" in lines[1] and "w-1" in lines[1]
    assert "\033[" not in stream.getvalue()  # not a terminal: no colour codes
