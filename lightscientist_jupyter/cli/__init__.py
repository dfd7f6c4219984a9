"""The `lightscientist` command line (also `python -m lightscientist_jupyter`).

Subcommands dispatch through `COMMANDS`, a table from name to (argument setup, handler).
Exit codes: 0 for `done` and `waiting_user` (and for commands that only read, and a `cancel`
that took effect), 1 for `failed` and `cancelled`, 2 for bad input — a usage error, an invalid
stage table, a reply with nothing pending, a model that failed the model check. Errors print
one line naming what to fix, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from lightscientist_jupyter import __version__, options
from lightscientist_jupyter.app import commands
from lightscientist_jupyter.app.commands import Route
from lightscientist_jupyter.app.text import table_text
from lightscientist_jupyter.cli import handoff
from lightscientist_jupyter.cli import history as history_commands
from lightscientist_jupyter.cli import jobs as jobs_commands
from lightscientist_jupyter.cli import literature as literature_commands
from lightscientist_jupyter.cli import reply as reply_command
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
    print(f"stage:   {info['stage']}  (mode {info['mode']})")
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
        mode=args.mode,
        stage=args.stage,
        stages=args.stages,
        model=args.model,
        base_url=args.base_url,
        record=bool(args.record),
        replies=args.replies,
        subscribers=subscribers(args),
        skip_model_check=args.skip_model_check,
        handoffs=args.handoff,
        until=args.until,
        **options.sandbox_values(args),
    )
    return run_project(project, args)


def cmd_resume(args: argparse.Namespace) -> int:
    from lightscientist_jupyter.app.project import Project

    project = Project.open(
        args.workspace or ".",
        model=args.model,
        base_url=args.base_url,
        record=bool(args.record),
        replies=args.replies,
        subscribers=subscribers(args),
        fresh_sessions=args.fresh_sessions,
        check_model=not args.skip_model_check,
        until=args.until,
        **options.sandbox_values(args),
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


# ------------------------------------------------------------------------- check-model


def cmd_check_model(args: argparse.Namespace) -> int:
    outcome = commands.check_model(args.model, args.base_url)
    print(outcome.message)
    return EXIT_OK if outcome.ok else EXIT_FAILED


# ------------------------------------------------------------------------- dispatch

Command = tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int], str]


def _waiting(
    setup: Callable[[argparse.ArgumentParser], None],
) -> Callable[[argparse.ArgumentParser], None]:
    """A subcommand's options plus `--wait` (stay at a gate for its reply)."""

    def both(parser: argparse.ArgumentParser) -> None:
        setup(parser)
        options.wait(parser)

    return both


COMMANDS: dict[str, Command] = {
    "research": (_waiting(options.research), cmd_research, "start a research project and run it"),
    "resume": (
        _waiting(options.resume),
        cmd_resume,
        "continue a project that stopped (crash, restart)",
    ),
    "workers": (options.workers, cmd_workers, "list the workers and their state"),
    "cancel": (options.cancel, cmd_cancel, "cancel one worker, or the whole run"),
    "reply": (
        _waiting(options.reply),
        reply_command.cmd_reply,
        "approve or reject the pending gate or question",
    ),
    "status": (options.status, cmd_status, "show the project's stage, status and pending decision"),
    "events": (options.events, cmd_events, "print the event stream"),
    "stages": (options.stages, cmd_stages, "validate and print a stage table"),
    "check-model": (options.check_model, cmd_check_model, "can this model call tools?"),
    **history_commands.COMMANDS,
    **usage_commands.COMMANDS,
    **jobs_commands.COMMANDS,
    **literature_commands.COMMANDS,
    "take": (options.take, handoff.cmd_take, "do the current stage (or STAGE) yourself"),
    "deliver": (_waiting(options.deliver), handoff.cmd_deliver, "deliver the stage you took"),
    "give-back": (_waiting(options.give_back), handoff.cmd_give_back, "return it to workers"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lightscientist",
        description="LightScientist: a three-layer research agent (stage machine, supervisor, "
        "persistent workers).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (setup, _, help_text) in COMMANDS.items():
        setup(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = COMMANDS[args.command][1]
    try:
        return handler(args)
    except StorageFault as exc:  # the run stopped; `resume` continues once the storage is back
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
