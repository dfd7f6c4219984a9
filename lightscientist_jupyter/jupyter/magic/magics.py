"""The `%lightscientist` line magic: the command line's subcommands, inside a notebook.

    %load_ext lightscientist_jupyter
    %lightscientist research "Does warmup help a small MLP?" --mode manual
    %lightscientist reply y --comment "go on"
    %lightscientist show paper

The line is split with `shlex` (quotes respected) and parsed by one argparse parser per
subcommand; the subcommands are the operations of `app.ops.catalog.OPERATIONS` (with the
command line's arguments), shown by the renderers of `RENDERERS`, plus `help`.
Bad input raises `UsageError` — a one-line message, never a traceback — and so does any
`LightScientistError` a handler meets.

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
from typing import Any, NamedTuple

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.display import display
from traitlets import Bool, Enum, List, TraitType, Unicode
from traitlets.config import Configurable

from lightscientist_jupyter import api
from lightscientist_jupyter.app import lab_defaults
from lightscientist_jupyter.app.ops.catalog import OPERATIONS, Door, Operation
from lightscientist_jupyter.app.ops.run_options import (
    SESSION_DEFAULTS,
    Default,
    RunOptions,
    SessionDefaults,
)
from lightscientist_jupyter.app.usage import parse_budget
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.jupyter.dashboard import display as boards
from lightscientist_jupyter.jupyter.dashboard.graph import TableDiagram
from lightscientist_jupyter.jupyter.magic import events as magic_events
from lightscientist_jupyter.jupyter.magic import handoff as magic_handoff
from lightscientist_jupyter.jupyter.magic import history as magic_history
from lightscientist_jupyter.jupyter.magic import jobs as magic_jobs
from lightscientist_jupyter.jupyter.magic import literature as magic_literature
from lightscientist_jupyter.jupyter.magic import memory as magic_memory
from lightscientist_jupyter.jupyter.magic import show as magic_show
from lightscientist_jupyter.jupyter.magic import tree as magic_tree
from lightscientist_jupyter.jupyter.magic import usage as magic_usage
from lightscientist_jupyter.jupyter.magic.session import MagicSession
from lightscientist_jupyter.vocab import CancelSource, ReplySource

PROG = "%lightscientist"


class _HelpShown(Exception):
    """`-h` printed a help text; the magic returns quietly."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports problems as `UsageError` instead of exiting the kernel."""

    def error(self, message: str) -> None:  # type: ignore[override]
        command = self.prog.split()[1]  # `%lightscientist memory search`: memory's help
        raise UsageError(f"{self.prog}: {message} (see `{PROG} help {command}`)")

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        if status:
            raise UsageError(message or f"{self.prog}: invalid arguments")
        raise _HelpShown()


# ------------------------------------------------------------------------- argument setup


def _setup_help(p: argparse.ArgumentParser) -> None:
    p.add_argument("command", nargs="?", help="a subcommand")


# ------------------------------------------------------------------------- handlers


def _research(m: MagicSession, args: argparse.Namespace) -> Any:
    if args.dry_run:  # nothing starts, nothing is written
        return magic_usage.estimate(m, args)
    run = api.start(  # the session's other %config defaults: applied by `api.start`
        args.goal,
        m.workspace_of(args),
        mode=args.mode or m.defaults().mode,
        stage=args.stage,
        stages=args.stages,
        handoffs=args.handoff,
        **vars(RunOptions.from_args(args)),
    )
    display(boards.dashboard_of(run))
    return None


def _reply(m: MagicSession, args: argparse.Namespace) -> None:
    workspace = m.workspace_of(args)
    sent = api.open_project(workspace).reply(
        args.answer in ("y", "yes"),
        args.comment,
        args.to,
        source=ReplySource.MAGIC,
        budget=parse_budget(args.budget) or None,
        resume_if_idle=True,  # nobody runs the project: it runs here (with %config), the reply too
    )
    print(sent.message)
    display(boards.dashboard_of(api.open_project(workspace)))


def _resume(m: MagicSession, args: argparse.Namespace) -> None:
    run = api.resume(  # the session's %config defaults: applied by `api.resume`
        m.workspace_of(args),
        fresh_sessions=args.fresh_sessions,
        check_model=not args.skip_model_check,
        **vars(RunOptions.from_args(args)),
    )
    if run.project.retried:
        print(run.project.retried)
    display(boards.dashboard_of(run))


def _status(m: MagicSession, args: argparse.Namespace) -> dict[str, Any] | None:
    view = api.open_project(m.workspace_of(args))
    if args.json:
        return view.status()
    display(boards.dashboard_of(view))
    return None


def _events(m: MagicSession, args: argparse.Namespace) -> Any:
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


def _workers(m: MagicSession, args: argparse.Namespace) -> Any:
    view = api.open_project(m.workspace_of(args))
    if args.json:
        return api.worker_records(view.workspace)
    return view.workers()


def _cancel(m: MagicSession, args: argparse.Namespace) -> None:
    print(api.cancel(m.workspace_of(args), args.worker_id))


def _stages(m: MagicSession, args: argparse.Namespace) -> TableDiagram:
    return TableDiagram(api.stages(args.stages))


def _help(m: MagicSession, args: argparse.Namespace) -> None:
    if args.command:
        table = commands()
        if args.command not in table:
            raise UsageError(f"unknown subcommand '{args.command}'; one of {', '.join(table)}")
        print(parser(args.command).format_help())
        return
    table = commands()
    width = max(map(len, table))
    lines = [f"{PROG} COMMAND [options]   (`{PROG} help COMMAND` for its options)", ""]
    lines += [f"  {name:<{width}}  {cmd.help}" for name, cmd in table.items()]
    names = " / ".join(f".{d.name}" for d in SESSION_DEFAULTS)
    lines += ["", f"Defaults for a session: %config LightScientistMagics{names[1:]}"]
    print("\n".join(lines))


class Command(NamedTuple):
    setup: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[MagicSession, argparse.Namespace], Any]
    help: str


Renderer = Callable[[MagicSession, argparse.Namespace], Any]

RENDERERS: dict[str, tuple[Renderer, str]] = {
    "research": (_research, "shows the live dashboard and returns"),
    "reply": (_reply, ""),
    "resume": (_resume, "shows the live dashboard and returns"),
    "status": (_status, "the dashboard (--json: a dict)"),
    "events": (_events, "a DataFrame (--follow: live)"),
    "workers": (_workers, "a DataFrame"),
    "cancel": (_cancel, ""),
    "stages": (_stages, "drawn"),
    "take": (magic_handoff.take, ""),
    "deliver": (magic_handoff.deliver, ""),
    "give-back": (magic_handoff.give_back, ""),
    "history": (magic_history.history, "a DataFrame"),
    "check": (magic_literature.check, "a DataFrame"),
    "diff": (magic_history.diff, "a picture"),
    "rewind": (magic_history.rewind, ""),
    "fork": (magic_history.fork, ""),
    "usage": (magic_usage.usage, "a DataFrame"),
    "jobs": (magic_jobs.jobs_table, "a DataFrame"),
    "tree": (magic_tree.tree, "drawn (--json: a dict)"),
    "estimate": (magic_usage.estimate, "a DataFrame"),
    "show": (magic_show.show, "the paper's pages, a table of reviews, a file inline"),
    "memory": (magic_memory.memory, "a DataFrame (--json: a list of dicts)"),
}
"""How the magic shows each operation of `OPERATIONS`, and what it shows; one it has no
renderer for is performed and its line printed (a `UsageError` when it is not `ok`)."""


def _performed(operation: Operation[Any]) -> Renderer:
    perform = operation.perform
    if perform is None:
        raise AssertionError(f"the magic has no renderer for '{operation.name}'")

    def render(m: MagicSession, args: argparse.Namespace) -> None:
        outcome = perform(operation.request_from(args), Door(CancelSource.NOTEBOOK, m.defaults()))
        if not outcome.ok:
            raise UsageError(f"{PROG} {operation.name}: {outcome.message}")
        print(outcome.message)

    return render


def commands() -> dict[str, Command]:
    """The magic's subcommands: every operation, then `help`."""
    table: dict[str, Command] = {}
    for name, operation in OPERATIONS.items():
        render, shows = RENDERERS.get(name) or (_performed(operation), "")
        text = f"{operation.help}; {shows}" if shows else operation.help
        table[name] = Command(operation.arguments, render, text)
    table["help"] = Command(_setup_help, _help, "this overview, or one subcommand's options")
    return table


def parser(name: str, command: Command | None = None) -> _Parser:
    """The parser of subcommand `name` (`command`, when the caller has it already)."""
    command = command or commands()[name]
    made = _Parser(prog=f"{PROG} {name}", description=command.help, add_help=True)
    command.setup(made)
    return made


def _trait(default: Default) -> TraitType[Any, Any]:
    """The `%config` trait of one session default."""
    if default.kind is bool:
        return Bool(default.initial, help=default.help).tag(config=True)
    if default.kind is list:
        return List(Unicode(), help=default.help).tag(config=True)
    if default.choices:
        return Enum(list(default.choices), default.initial, help=default.help).tag(config=True)
    if default.initial is None:
        return Unicode(None, allow_none=True, help=default.help).tag(config=True)
    return Unicode(default.initial, help=default.help).tag(config=True)


SessionTraits: type[Configurable] = type(
    "SessionTraits", (Configurable,), {d.name: _trait(d) for d in SESSION_DEFAULTS}
)
"""The `%config LightScientistMagics.<name>` traits, one per `SESSION_DEFAULTS`."""


# ------------------------------------------------------------------------- the magic


@magics_class
class LightScientistMagics(Magics, SessionTraits):  # type: ignore[misc,valid-type]
    """`%lightscientist`: run and inspect LightScientist projects from a notebook; its
    `%config` defaults are `SessionTraits`."""

    def defaults(self) -> SessionDefaults:
        """The session's `%config` defaults now, over the ones set in JupyterLab's Settings
        Editor (`app.lab_defaults`)."""
        explicit = set(self.config.get(type(self).__name__, {}))
        return SessionDefaults.of(self).over(lab_defaults.load(), explicit)

    def workspace_of(self, args: argparse.Namespace) -> str:
        # the session's own default: JupyterLab's settings hold none, so no file is read
        return getattr(args, "workspace", None) or SessionDefaults.of(self).workspace or "."

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
        table = commands()
        command = table.get(name)
        if command is None:
            known = ", ".join(table)
            raise UsageError(f"{PROG}: unknown subcommand '{name}'; one of {known}")
        try:
            args = parser(name, command).parse_args(rest)
        except _HelpShown:
            return None
        try:
            return command.handler(self, args)
        except LightScientistError as exc:
            raise UsageError(f"{PROG} {name}: {exc}") from None


def load_ipython_extension(ipython: Any) -> None:
    """Register `%lightscientist` (its `Magics.__init__` also makes it `%config`-urable)."""
    magic = LightScientistMagics(shell=ipython)
    ipython.register_magics(magic)
    api.use_session_defaults(magic.defaults)  # every run of this kernel takes its %config
    boards.register(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    api.use_session_defaults(None)
    boards.unregister(ipython)
    ipython.configurables[:] = [
        c for c in ipython.configurables if not isinstance(c, LightScientistMagics)
    ]
    ipython.magics_manager.magics["line"].pop("lightscientist", None)
