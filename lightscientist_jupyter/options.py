"""The subcommands' options, shared by the command line and the `%lightscientist` magic.

One function per subcommand adds its arguments to an argparse parser, so the two shells
accept exactly the same options with the same meaning. The shells differ only in defaults a
notebook user sets once per session (`%config LightScientistMagics.mode`, …): `research`
takes the default mode as a parameter.
"""

from __future__ import annotations

import argparse
from typing import Any

Parser = argparse.ArgumentParser


def workspace(p: Parser) -> None:
    p.add_argument(
        "--workspace", "-w", metavar="DIR", help="project folder (default: the current directory)"
    )


def run_options(p: Parser) -> None:
    p.add_argument(
        "--model",
        metavar="SPEC",
        help="offline (default), provider:model, a model name with --base-url, or "
        "replay:PATH[,lenient] (the answers of a run made with --record)",
    )
    p.add_argument(
        "--base-url", metavar="URL", help="an OpenAI-compatible server (chat completions)"
    )
    p.add_argument(
        "--record",
        action="store_true",
        default=None,
        help="append every model call to .lightscientist/recordings/ (a project started "
        "with --record keeps recording when resumed; also LIGHTSCIENTIST_RECORD=1)",
    )
    p.add_argument(
        "--replies",
        choices=["recorded"],
        help="with --model replay:PATH: answer each gate with the recording's next reply",
    )
    p.add_argument(
        "--skip-model-check",
        action="store_true",
        help="start without first checking that the model can call tools (see check-model)",
    )
    p.add_argument(
        "--library",
        action="append",
        metavar="PATH",
        help="a local library the workers' search_literature reads: a .bib or CSL-JSON file or "
        "a folder of them (repeatable; kept for resume)",
    )
    p.add_argument(
        "--watch",
        action="store_true",
        help="print events as they happen (a notebook's dashboard always streams)",
    )
    sandbox(p)


def sandbox(p: Parser) -> None:
    """Where workers' commands run; a project keeps what `research` was given, and `resume`
    uses it unless told otherwise."""
    p.add_argument(
        "--sandbox",
        choices=["auto", "bwrap", "none"],
        default=None,
        help="run workers' commands in a bubblewrap sandbox: auto (default: when bwrap "
        "works here, else unsandboxed with a warning), bwrap (refuse to run without it), none",
    )
    p.add_argument(
        "--allow-network",
        action="store_true",
        default=None,
        help="let workers' commands use the network (default: only stages with network = true)",
    )
    p.add_argument(
        "--limits",
        metavar="SPEC",
        help="resource limits of each command, e.g. mem=2G,cpu=600,procs=256,fsize=1G "
        "(defaults mem=4G,cpu=600,procs=256,fsize=1G; 'none' lifts one; they win over a "
        "stage's limits)",
    )


def sandbox_values(args: argparse.Namespace) -> dict[str, Any]:
    """The sandbox options as keyword arguments of `Project.create`/`open` (and the API)."""
    return {
        "sandbox": args.sandbox,
        "allow_network": args.allow_network,
        "limits": args.limits,
        "library": getattr(args, "library", None),
    }


def wait(p: Parser) -> None:
    """The command line's `--wait` (a notebook's run always waits at gates)."""
    p.add_argument(
        "--wait",
        action="store_true",
        help="at a gate, keep running and wait for the reply (from the side panel, "
        "a notebook or `lightscientist reply`) instead of exiting",
    )


def research(p: Parser, *, mode_default: str | None = "manual") -> None:
    p.add_argument("goal", help="the research goal, in quotes")
    workspace(p)
    p.add_argument(
        "--mode",
        choices=["auto", "manual"],
        default=mode_default,
        help="auto: gates pass by themselves; manual (default): gates wait for a reply",
    )
    p.add_argument(
        "--stage", metavar="STAGE", help="start at this stage instead of the table's start"
    )
    p.add_argument("--stages", metavar="FILE", help="stage table TOML (default: the shipped one)")
    run_options(p)


def reply(p: Parser) -> None:
    p.add_argument("answer", choices=["y", "n", "yes", "no"], help="approve (y) or reject (n)")
    p.add_argument(
        "--comment", "-m", default="", help="a comment for the record and the next worker"
    )
    p.add_argument("--to", metavar="STAGE", help="on reject: the stage to send the project back to")
    workspace(p)
    p.add_argument("--watch", action="store_true", help="print events as they happen")


def resume(p: Parser) -> None:
    workspace(p)
    run_options(p)
    p.add_argument(
        "--fresh-sessions",
        action="store_true",
        help="restart the current stage from its start with new worker and supervisor "
        "sessions (state, history and files are kept; the checkpoint database is moved "
        "aside): the way on from a damaged checkpoint database",
    )


def status(p: Parser) -> None:
    workspace(p)
    p.add_argument("--json", action="store_true", help="one JSON object (a dict in a notebook)")


def events(p: Parser) -> None:
    workspace(p)
    p.add_argument("--tail", "-n", type=int, default=20, metavar="N", help="last N events (20)")
    p.add_argument("--layer", type=int, choices=[1, 2, 3], help="only this layer")
    p.add_argument("--type", metavar="TYPE", help="only this type (or a prefix such as 'stage.')")
    p.add_argument("--worker", metavar="ID", help="only this worker")
    p.add_argument(
        "--follow",
        "-f",
        action="store_true",
        help="keep showing new events (in a notebook: the live event list)",
    )
    p.add_argument(
        "--json", action="store_true", help="raw events (JSON lines; dicts in a notebook)"
    )


def workers(p: Parser) -> None:
    workspace(p)
    p.add_argument("--json", action="store_true", help="raw worker records")


def cancel(p: Parser) -> None:
    p.add_argument(
        "worker_id",
        nargs="?",
        metavar="WORKER_ID",
        help="one worker to cancel (default: the whole run)",
    )
    workspace(p)


def stages(p: Parser) -> None:
    p.add_argument("--stages", metavar="FILE", help="stage table TOML (default: the shipped one)")


def check(p: Parser) -> None:
    workspace(p)
    p.add_argument(
        "paths", nargs="*", metavar="PATH", help="documents to check (default: paper/paper.md)"
    )
    p.add_argument(
        "--results",
        action="append",
        metavar="FOLDER",
        help="folder of result files (CSV/TSV/JSON) numbers trace to (default: experiment)",
    )


def check_model(p: Parser) -> None:
    p.add_argument(
        "--model",
        metavar="SPEC",
        help="the model to check (default: LIGHTSCIENTIST_MODEL, else offline)",
    )
    p.add_argument(
        "--base-url", metavar="URL", help="an OpenAI-compatible server (chat completions)"
    )
