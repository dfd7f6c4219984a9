"""The `lightscientist` command line (also `python -m lightscientist_jupyter`).

The subcommands are the operations of `app.ops.catalog.OPERATIONS`; `HANDLERS` says how this
shell shows each (an operation it has none for is performed and its line printed).
Exit codes: 0 for `done` and `waiting_user` (and for commands that only read, and a `cancel`
that took effect), 1 for `failed` and `cancelled` (and a memory that cannot be opened), 2 for
bad input — a usage error, an invalid
stage table, a reply with nothing pending, a model that failed the model check. Errors print
one line naming what to fix, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from lightscientist_jupyter import __version__
from lightscientist_jupyter.app import commands
from lightscientist_jupyter.app.commands import Route
from lightscientist_jupyter.app.ops import arguments
from lightscientist_jupyter.app.ops.catalog import OPERATIONS, Door, Operation
from lightscientist_jupyter.app.ops.run_options import RunOptions
from lightscientist_jupyter.app.text import table_text
from lightscientist_jupyter.cli import agents as agents_commands
from lightscientist_jupyter.cli import handoff
from lightscientist_jupyter.cli import history as history_commands
from lightscientist_jupyter.cli import jobs as jobs_commands
from lightscientist_jupyter.cli import literature as literature_commands
from lightscientist_jupyter.cli import memory as memory_commands
from lightscientist_jupyter.cli import reply as reply_command
from lightscientist_jupyter.cli import show as show_command
from lightscientist_jupyter.cli import tree as tree_commands
from lightscientist_jupyter.cli import usage as usage_commands
from lightscientist_jupyter.cli.foreground import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    finish_line,
    next_step,
    run_project,
    subscribers,
)
from lightscientist_jupyter.controller import load_table
from lightscientist_jupyter.controller.state import PendingDecision
from lightscientist_jupyter.errors import (
    BadInput,
    LightScientistError,
    MemoryUnavailable,
    StageTableError,
    StorageFault,
)
from lightscientist_jupyter.events import follow, format_line, make_filter, printable, read_tail
from lightscientist_jupyter.vocab import CancelSource
from lightscientist_jupyter.workspace import Workspace


def _workspace(args: argparse.Namespace) -> Workspace:
    return Workspace.at(args.workspace or ".")


# ------------------------------------------------------------------------- stages


def cmd_stages(args: argparse.Namespace) -> int:
    print(table_text(load_table(args.stages)))
    return EXIT_OK


# ------------------------------------------------------------------------- status


def cmd_status(args: argparse.Namespace) -> int:
    info = commands.status(_workspace(args))
    if args.json:
        print(json.dumps(info, ensure_ascii=False))
        return EXIT_OK
    print(f"goal:    {printable(info['goal'])}")
    print(f"stage:   {info['stage'] or '(none yet)'}  (mode {info['mode']})")
    if info["reason"]:
        print(f"reason:  {printable(info['reason'])}")
    runner = info["runner"]
    print(
        f"runner:  pid {runner.get('pid')} on {runner.get('host')}"
        if runner
        else "runner:  none (the project is not being run now)"
    )
    pending = info["pending"]
    if pending:
        print(f"pending: {pending['id']} — {printable(pending['question'])}")
        for out in pending["outputs"]:
            print(f"         {printable(out)}")
        reply = "reply with `lightscientist reply y` or `reply n --comment … [--to STAGE]`"
        print("         " + next_step(PendingDecision.from_dict(pending), reply))
    used = info["usage"]
    print(f"usage:   {used['tokens']:,} tokens in {used['model_calls']} calls, cost {used['cost']}")
    warning = info["sandbox"]["warning"]
    if warning:
        print(f"warning: {warning}")
    print(info["status"])
    return EXIT_OK


# ------------------------------------------------------------------------- research, resume


def cmd_research(args: argparse.Namespace) -> int:
    from lightscientist_jupyter.app.project import Project

    if args.dry_run:  # nothing starts, nothing is written
        return usage_commands.cmd_estimate(args)
    project = Project.create(
        args.workspace or ".",
        args.goal,
        mode=args.mode or "manual",
        stage=args.stage,
        stages=args.stages,
        subscribers=subscribers(args),
        handoffs=args.handoff,
        **RunOptions.from_args(args).project_keywords(),
        skip_model_check=args.skip_model_check,
    )
    return run_project(project, args)


def cmd_resume(args: argparse.Namespace) -> int:
    from lightscientist_jupyter.app.project import Project

    project = Project.open(
        args.workspace or ".",
        subscribers=subscribers(args),
        fresh_sessions=args.fresh_sessions,
        check_model=not args.skip_model_check,
        **RunOptions.from_args(args).project_keywords(),
    )
    for note in project.notes:
        print(note)
    retried = project.reopen()  # a failed stage: say what failed before it starts again
    if retried:
        print(retried, flush=True)
    for outcome in project.controller.poll_inbox():  # replies queued while nobody ran it
        verdict = "applied" if outcome.applied else "not applied"
        print(f"queued reply {verdict}: {printable(outcome.message)}", flush=True)
    return run_project(project, args)


# ------------------------------------------------------------------------- workers, cancel


def cmd_workers(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    commands.require_project(ws)
    records = commands.worker_records(ws)
    if args.json:
        print(json.dumps(records, ensure_ascii=False))
        return EXIT_OK
    print(f"{'worker':<12}{'role':<11}{'stage':<20}{'status':<11}{'model':>6}{'tools':>6}  label")
    for r in records:
        p = r.get("progress") or {}
        label = printable((r.get("labels") or {}).get("label", ""))
        print(
            f"{r['id']:<12}{r.get('role', ''):<11}{(r.get('stage') or ''):<20}"
            f"{r.get('status', ''):<11}{p.get('model_calls', 0):>6}{p.get('tool_calls', 0):>6}  "
            f"{label}"
        )
    return EXIT_OK


def cmd_cancel(args: argparse.Namespace) -> int:
    sent = commands.cancel(_workspace(args), args.worker_id, source=CancelSource.COMMAND_LINE)
    if sent.status is None:
        print(sent.message)
        return EXIT_OK
    if sent.route is Route.UNCHANGED:
        print(sent.message)
    finish_line(sent.status)
    return EXIT_OK  # the cancel took effect (or had nothing left to do)


# ------------------------------------------------------------------------- events


def cmd_events(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    commands.require_project(ws)
    tail = 20 if args.tail is None else args.tail
    if tail < 0:
        raise BadInput("--tail must be 0 or more")
    keep = make_filter(layer=args.layer, type=args.type, worker_id=args.worker)
    show: Callable[[dict[str, Any]], str] = (
        (lambda raw: json.dumps(raw, ensure_ascii=False))
        if args.json
        else (
            lambda raw: (
                format_line(raw, color=sys.stdout.isatty())
                + (f" data={json.dumps(raw['data'], ensure_ascii=False)}" if args.data else "")
            )
        )
    )
    # `last` first: an event appended while the tail is printed is then followed, not lost.
    newest = read_tail(ws.events_file, 1)
    last = newest[-1]["seq"] if newest else 0
    for raw in read_tail(ws.events_file, tail, keep):
        if raw["seq"] <= last:
            print(show(raw))
    sys.stdout.flush()  # with --follow into a pipe, the tail must not wait for the next event
    if args.follow:
        try:
            for raw in follow(ws.events_file, after=last, keep=keep):
                print(show(raw), flush=True)
        except KeyboardInterrupt:
            pass
    return EXIT_OK


# ------------------------------------------------------------------------- dispatch

Handler = Callable[[argparse.Namespace], int]

HANDLERS: dict[str, Handler] = {
    "research": cmd_research,
    "resume": cmd_resume,
    "reply": reply_command.cmd_reply,
    "status": cmd_status,
    "events": cmd_events,
    "workers": cmd_workers,
    "cancel": cmd_cancel,
    "stages": cmd_stages,
    **history_commands.HANDLERS,
    **usage_commands.HANDLERS,
    **jobs_commands.HANDLERS,
    **tree_commands.HANDLERS,
    **literature_commands.HANDLERS,
    **show_command.HANDLERS,
    **handoff.HANDLERS,
    **memory_commands.HANDLERS,
    **agents_commands.HANDLERS,
}
"""How the command line shows each operation of `OPERATIONS`; one it has no handler for is
performed and its outcome's line printed (exit 1 when it is not `ok`)."""


def _performed(operation: Operation[Any]) -> Handler:
    perform = operation.perform
    if perform is None:
        raise AssertionError(f"the command line has no handler for '{operation.name}'")

    def handler(args: argparse.Namespace) -> int:
        outcome = perform(operation.request_from(args), Door(CancelSource.COMMAND_LINE))
        print(outcome.message)
        return EXIT_OK if outcome.ok else EXIT_FAILED

    return handler


def handler_of(name: str) -> Handler:
    return HANDLERS.get(name) or _performed(OPERATIONS[name])


def _arguments(operation: Operation[Any]) -> Callable[[argparse.ArgumentParser], None]:
    """An operation's arguments, plus `--wait` (stay at a gate for its reply) where it may run
    the project in this process."""

    def setup(parser: argparse.ArgumentParser) -> None:
        operation.arguments(parser)
        if operation.runs:
            arguments.wait(parser)

    return setup


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lightscientist",
        description="LightScientist: a three-layer research agent (stage machine, supervisor, "
        "persistent workers).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, operation in OPERATIONS.items():
        parser_of = sub.add_parser(name, help=operation.help, description=operation.help)
        _arguments(operation)(parser_of)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = handler_of(args.command)
    try:
        return handler(args)
    except (StorageFault, MemoryUnavailable) as exc:
        # a run stopped (`resume` continues once the storage is back), or the user's memory
        # cannot be opened: the line names which; the input was not wrong
        print(f"lightscientist {args.command}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except StageTableError as exc:
        print(f"lightscientist {args.command}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except LightScientistError as exc:
        print(f"lightscientist {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
