"""The `%lightscientist` line magic: the command line's subcommands, inside a notebook.

    %load_ext lightscientist_jupyter
    %lightscientist research "Does warmup help a small MLP?" --mode manual
    %lightscientist reply y --comment "go on"
    %lightscientist show paper

The line is split with `shlex` (quotes respected) and parsed by one argparse parser per
subcommand; the subcommands are the rows of `COMMANDS` (name → argument setup, handler,
help), with the command line's options. Bad input raises `UsageError` — a one-line message,
never a traceback — and so does any `LightScientistError` a handler meets.

`research`, `reply` and `resume` display the dashboard and return at once: the run goes on
in background threads (see `lightscientist_jupyter.api`), and a waiting cell would block the
dashboard's own buttons. Defaults a user sets once per session are traitlets:

    %config LightScientistMagics.model = "openai:gpt-4.1-mini"
    %config LightScientistMagics.workspace = "studies/warmup"
    %config LightScientistMagics.checkpoints = "postgresql://me@db.lab:5432/research"
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.display import Markdown, display
from traitlets import Bool, Enum, List, Unicode

from lightscientist_jupyter import api, options
from lightscientist_jupyter.app.usage import parse_budget
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.jupyter import show as show_files
from lightscientist_jupyter.jupyter.dashboard import display as boards
from lightscientist_jupyter.jupyter.dashboard.graph import TableDiagram
from lightscientist_jupyter.jupyter.magic import events as magic_events
from lightscientist_jupyter.jupyter.magic import handoff as magic_handoff
from lightscientist_jupyter.jupyter.magic import history as magic_history
from lightscientist_jupyter.jupyter.magic import jobs as magic_jobs
from lightscientist_jupyter.jupyter.magic import literature as magic_literature
from lightscientist_jupyter.jupyter.magic import usage as magic_usage

PROG = "%lightscientist"


class _HelpShown(Exception):
    """`-h` printed a help text; the magic returns quietly."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports problems as `UsageError` instead of exiting the kernel."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see `{PROG} help {self.prog.split()[-1]}`)")

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        if status:
            raise UsageError(message or f"{self.prog}: invalid arguments")
        raise _HelpShown()


# ------------------------------------------------------------------------- argument setup


def _setup_research(p: argparse.ArgumentParser) -> None:
    options.research(p, mode_default=None)  # None: %config LightScientistMagics.mode decides


def _setup_show(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "target", help="PROCESS.md, a stage id (its outputs), paper, or a path in the workspace"
    )
    options.workspace(p)


def _setup_help(p: argparse.ArgumentParser) -> None:
    p.add_argument("command", nargs="?", help="a subcommand")


# ------------------------------------------------------------------------- handlers


def _research(m: LightScientistMagics, args: argparse.Namespace) -> Any:
    if args.dry_run:  # nothing starts, nothing is written
        return magic_usage.estimate(m, args)
    run = api.start(
        args.goal,
        m.workspace_of(args),
        mode=args.mode or m.mode,
        stage=args.stage,
        stages=args.stages,
        model=args.model or m.model or None,
        base_url=args.base_url or m.base_url or None,
        record=bool(args.record or m.record),
        replies=args.replies,
        skip_model_check=args.skip_model_check,
        handoffs=args.handoff,
        until=args.until,
        **magic_usage.run_values(m, args),  # with %config .budget and .price
    )
    display(boards.dashboard_of(run))
    return None


def _reply(m: LightScientistMagics, args: argparse.Namespace) -> None:
    workspace = m.workspace_of(args)
    sent = api.open_project(workspace).reply(
        args.answer in ("y", "yes"),
        args.comment,
        args.to,
        source="magic",
        budget=parse_budget(args.budget) or None,
        resume_if_idle=True,  # nobody runs the project: it runs here, with the reply
        resume_options={
            "model": m.model or None,
            "base_url": m.base_url or None,
            "record": m.record,
            "checkpoints": m.checkpoints or None,
            "ray": m.ray or None,
        },
    )
    print(sent.message)
    display(boards.dashboard_of(api.open_project(workspace)))


def _resume(m: LightScientistMagics, args: argparse.Namespace) -> None:
    run = api.resume(
        m.workspace_of(args),
        model=args.model or m.model or None,
        base_url=args.base_url or m.base_url or None,
        fresh_sessions=args.fresh_sessions,
        record=bool(args.record or m.record),
        replies=args.replies,
        check_model=not args.skip_model_check,
        until=args.until,
        **magic_usage.run_values(m, args),  # with %config .budget and .price
    )
    if run.project.retried:
        print(run.project.retried)
    display(boards.dashboard_of(run))


def _status(m: LightScientistMagics, args: argparse.Namespace) -> dict[str, Any] | None:
    view = api.open_project(m.workspace_of(args))
    if args.json:
        return view.status()
    display(boards.dashboard_of(view))
    return None


def _paper_path(view: api.ProjectView) -> str:
    """The paper of the project's table: an output named paper.md, else the last Markdown
    output of a `paper.*` stage, else `paper/paper.md`."""
    outputs = [o for s in view.table() for o in s.outputs]
    named = [o for o in outputs if Path(o).name == "paper.md"]
    if named:
        return named[0]
    papers = [o for s in view.table() if s.phase == "paper" for o in s.outputs if o.endswith(".md")]
    return papers[-1] if papers else "paper/paper.md"


def _show(m: LightScientistMagics, args: argparse.Namespace) -> Any:
    view = api.open_project(m.workspace_of(args))
    target = args.target
    table = view.table()
    if target in table:
        for rel in table[target].outputs:
            display(Markdown(f"**`{rel}`**"))
            try:
                display(*show_files.load(view.files, rel))
            except show_files.ShowError as exc:
                display(Markdown(f"*{exc}*"))
        return None
    rel = _paper_path(view) if target == "paper" else target
    objects = show_files.load(view.files, rel)
    if len(objects) == 1:
        return objects[0]
    display(*objects)
    return None


def _events(m: LightScientistMagics, args: argparse.Namespace) -> Any:
    view = api.open_project(m.workspace_of(args))
    if args.follow:  # another view of the dashboard's live list (its filter is shared)
        stream = boards.dashboard_of(view).events
        for trait, value in (
            ("layer", args.layer),
            ("type_filter", args.type),
            ("worker", args.worker),
        ):
            if value is not None:
                setattr(stream, trait, value)
        display(stream)
        return None
    frame = magic_events.events_table(view, args)
    if args.json:
        return [{**row, "time": row["time"].timestamp()} for row in frame.to_dict("records")]
    return frame


def _workers(m: LightScientistMagics, args: argparse.Namespace) -> Any:
    view = api.open_project(m.workspace_of(args))
    if args.json:
        return api.worker_records(view.workspace)
    return view.workers()


def _cancel(m: LightScientistMagics, args: argparse.Namespace) -> None:
    print(api.cancel(m.workspace_of(args), args.worker_id))


def _stages(m: LightScientistMagics, args: argparse.Namespace) -> TableDiagram:
    return TableDiagram(api.stages(args.stages))


def _check_model(m: LightScientistMagics, args: argparse.Namespace) -> None:
    outcome = api.check_model(args.model or m.model or None, args.base_url or m.base_url or None)
    if not outcome.ok:
        raise UsageError(f"{PROG} check-model: {outcome.message}")
    print(outcome.message)


def _help(m: LightScientistMagics, args: argparse.Namespace) -> None:
    if args.command:
        if args.command not in COMMANDS:
            raise UsageError(f"unknown subcommand '{args.command}'; one of {', '.join(COMMANDS)}")
        print(m.parser(args.command).format_help())
        return
    width = max(map(len, COMMANDS))
    lines = [f"{PROG} COMMAND [options]   (`{PROG} help COMMAND` for its options)", ""]
    lines += [f"  {name:<{width}}  {cmd.help}" for name, cmd in COMMANDS.items()]
    lines += [
        "",
        "Defaults for a session: %config LightScientistMagics.model / .base_url / "
        ".mode / .workspace / .record / .budget / .price / .checkpoints / .ray / .library "
        "/ .job_time_limit",
    ]
    print("\n".join(lines))


class Command(NamedTuple):
    setup: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[LightScientistMagics, argparse.Namespace], Any]
    help: str


COMMANDS: dict[str, Command] = {
    "research": Command(
        _setup_research, _research, "start a research project; shows the live dashboard and returns"
    ),
    "reply": Command(
        options.reply, _reply, "approve (y) or reject (n) the pending gate or question"
    ),
    "resume": Command(options.resume, _resume, "continue a project that stopped"),
    "status": Command(options.status, _status, "show the project's dashboard (--json: a dict)"),
    "show": Command(_setup_show, _show, "show PROCESS.md, a stage's outputs, the paper or a file"),
    "events": Command(options.events, _events, "the event stream as a DataFrame (--follow: live)"),
    "workers": Command(options.workers, _workers, "the workers as a DataFrame"),
    "cancel": Command(options.cancel, _cancel, "cancel one worker, or the whole run"),
    "stages": Command(options.stages, _stages, "validate and draw a stage table"),
    "check-model": Command(options.check_model, _check_model, "can this model call tools?"),
    "take": Command(options.take, magic_handoff.take, "do the current stage (or STAGE) yourself"),
    "deliver": Command(options.deliver, magic_handoff.deliver, "deliver the stage you took"),
    "give-back": Command(options.give_back, magic_handoff.give_back, "return it to the workers"),
    "history": Command(options.history, magic_history.history, "the snapshots as a DataFrame"),
    "check": Command(options.check, magic_literature.check, "trace a paper's citations, numbers"),
    "diff": Command(options.diff, magic_history.diff, "what changed between snapshots"),
    "rewind": Command(options.rewind, magic_history.rewind, "go back to a stage visit's start"),
    "fork": Command(options.fork, magic_history.fork, "a new workspace at a stage visit's start"),
    "usage": Command(options.usage, magic_usage.usage, "tokens and cost as a DataFrame"),
    "jobs": Command(options.jobs, magic_jobs.jobs_table, "the submitted jobs as a DataFrame"),
    "estimate": Command(options.estimate, magic_usage.estimate, "what a run may cost, per stage"),
    "help": Command(_setup_help, _help, "this overview, or one subcommand's options"),
}


# ------------------------------------------------------------------------- the magic


@magics_class
class LightScientistMagics(Magics):
    """`%lightscientist`: run and inspect LightScientist projects from a notebook."""

    model = Unicode(
        None,
        allow_none=True,
        help="The model for new runs: offline, provider:model, or a model name "
        "served at base_url (default: LIGHTSCIENTIST_MODEL, else offline).",
    ).tag(config=True)
    base_url = Unicode(
        None,
        allow_none=True,
        help="An OpenAI-compatible server for the model (e.g. a local Ollama or vLLM).",
    ).tag(config=True)
    record = Bool(
        False,
        help="Record every model call of the runs this kernel starts or resumes "
        "(.lightscientist/recordings/), as --record does.",
    ).tag(config=True)
    mode = Enum(
        ["auto", "manual"],
        "manual",
        help="The mode of new runs: auto (gates pass) or manual (gates wait).",
    ).tag(config=True)
    workspace = Unicode(".", help="The project folder used when --workspace is not given.").tag(
        config=True
    )
    budget = Unicode(None, allow_none=True, help="--budget of runs: usd=…,tokens=…,hours=…").tag(
        config=True
    )
    price = Unicode(None, allow_none=True, help="--price of runs: in=…,out=… (USD per 1M)").tag(
        config=True
    )
    checkpoints = Unicode(
        None, allow_none=True, help="--checkpoints of runs: sqlite:///PATH or postgresql://…"
    ).tag(config=True)
    ray = Unicode(None, allow_none=True, help="--ray of runs: a Ray cluster for jobs").tag(
        config=True
    )
    library = List(Unicode(), help="--library of runs: .bib / CSL-JSON files or folders").tag(
        config=True
    )
    job_time_limit = Unicode(None, allow_none=True, help="--job-time-limit of runs: 30m, 6h…").tag(
        config=True
    )

    def parser(self, name: str) -> _Parser:
        command = COMMANDS[name]
        parser = _Parser(prog=f"{PROG} {name}", description=command.help, add_help=True)
        command.setup(parser)
        return parser

    def workspace_of(self, args: argparse.Namespace) -> str:
        return getattr(args, "workspace", None) or self.workspace or "."

    @line_magic
    def lightscientist(self, line: str = "") -> Any:
        """Run `%lightscientist help` for the subcommands."""
        try:
            argv = shlex.split(line)
        except ValueError as exc:
            raise UsageError(f"{PROG}: cannot split the line ({exc}); check the quotes") from None
        name, rest = (argv[0], argv[1:]) if argv else ("help", [])
        if name in ("-h", "--help"):
            name, rest = "help", []
        command = COMMANDS.get(name)
        if command is None:
            raise UsageError(f"{PROG}: unknown subcommand '{name}'; one of {', '.join(COMMANDS)}")
        try:
            args = self.parser(name).parse_args(rest)
        except _HelpShown:
            return None
        try:
            return command.handler(self, args)
        except LightScientistError as exc:
            raise UsageError(f"{PROG} {name}: {exc}") from None


def load_ipython_extension(ipython: Any) -> None:
    """Register `%lightscientist` (its `Magics.__init__` also makes it `%config`-urable)."""
    ipython.register_magics(LightScientistMagics(shell=ipython))
    boards.register(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    boards.unregister(ipython)
    ipython.configurables[:] = [
        c for c in ipython.configurables if not isinstance(c, LightScientistMagics)
    ]
    ipython.magics_manager.magics["line"].pop("lightscientist", None)
