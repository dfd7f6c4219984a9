"""The operations' arguments, shared by the command line and the `%lightscientist` magic.

One function per operation adds its arguments to an argparse parser (`catalog` names which),
so the two shells accept exactly the same options with the same meaning. An option a notebook
session may set a default for (`%config LightScientistMagics.mode`, …) is None when not
given, and the default is filled in by the one policy of `run_options`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from lightscientist_jupyter.app.memory import SEARCH_K
from lightscientist_jupyter.vocab import MemoryKind

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
        "--until",
        metavar="STAGE",
        help="stop with status 'paused' when STAGE finishes (`resume` goes on)",
    )
    p.add_argument(
        "--no-memory",
        action="store_true",
        default=None,
        help="this run neither recalls from nor files into your memory of earlier projects "
        "($LIGHTSCIENTIST_MEMORY; see memory)",
    )
    p.add_argument(
        "--watch",
        action="store_true",
        help="print events as they happen (a notebook's dashboard always streams)",
    )
    p.add_argument(
        "--checkpoints",
        metavar="URL",
        help="where sessions keep their checkpoints: sqlite:///PATH (default: the "
        "workspace's file) or postgresql://USER@HOST:PORT/DB (the postgres extra; also "
        "LIGHTSCIENTIST_CHECKPOINTS; the project keeps it without the password)",
    )
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run workers' jobs (submit_job) on this Ray cluster, e.g. http://HEAD:8265 (the ray "
        "extra; also RAY_ADDRESS; kept for resume), or on this machine with 'local' (the "
        "default; it also sets aside a kept address)",
    )
    p.add_argument(
        "--job-time-limit",
        metavar="DURATION",
        help="the longest a worker's job (submit_job) may run, e.g. 90s, 30m, 6h (default 6h; "
        "kept for resume); a job over it is ended and its worker told",
    )
    p.add_argument(
        "--budget",
        metavar="LIMITS",
        help="stop for a decision when the project has spent this much: usd=…,tokens=…,hours=… "
        "(any of them; 80 %% warns)",
    )
    p.add_argument(
        "--price",
        metavar="PRICES",
        help="USD per million tokens, in=…,out=…[,cached=…], for a model the price library "
        "does not know (a local one); without it such a model's cost is 'unknown'",
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


def wait(p: Parser) -> None:
    """The command line's `--wait` (a notebook's run always waits at gates)."""
    p.add_argument(
        "--wait",
        action="store_true",
        help="at a gate, keep running and wait for the reply (from the side panel, "
        "a notebook or `lightscientist reply`) instead of exiting",
    )


def research(p: Parser) -> None:
    """`research`'s arguments; `--mode` not given is None (manual, or a notebook's
    `%config LightScientistMagics.mode`)."""
    p.add_argument("goal", help="the research goal, in quotes")
    workspace(p)
    p.add_argument(
        "--mode",
        choices=["auto", "manual"],
        help="auto: gates pass by themselves; manual (default): gates wait for a reply",
    )
    p.add_argument(
        "--stage", metavar="STAGE", help="start at this stage instead of the table's start"
    )
    p.add_argument("--stages", metavar="FILE", help="stage table TOML (default: the shipped one)")
    p.add_argument(
        "--handoff",
        metavar="STAGE[,STAGE]",
        type=stage_list,
        default=(),
        help="stages you do yourself: the project waits for you there (see take / deliver)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="start nothing, write nothing: print the estimate of the run (see estimate)",
    )
    run_options(p)


def stage_list(text: str) -> tuple[str, ...]:
    """`a,b` → `("a", "b")` (blanks dropped)."""
    return tuple(s.strip() for s in text.split(",") if s.strip())


def take(p: Parser) -> None:
    p.add_argument(
        "stage",
        nargs="?",
        metavar="STAGE",
        help="a stage to do yourself when the project reaches it (default: the current "
        "stage, now; at a gate: the stage its approval moves to)",
    )
    workspace(p)


def deliver(p: Parser) -> None:
    p.add_argument("--summary", "-m", required=True, help="what you did and found, for PROCESS.md")
    p.add_argument("--next", metavar="STAGE", help="the next stage (default: the stage's next)")
    p.add_argument(
        "--output", action="append", default=[], metavar="PATH", help="a further file you wrote"
    )
    workspace(p)


def give_back(p: Parser) -> None:
    workspace(p)


def reply(p: Parser) -> None:
    p.add_argument("answer", choices=["y", "n", "yes", "no"], help="approve (y) or reject (n)")
    p.add_argument(
        "--comment", "-m", default="", help="a comment for the record and the next worker"
    )
    p.add_argument("--to", metavar="STAGE", help="on reject: the stage to send the project back to")
    p.add_argument(
        "--budget",
        metavar="LIMITS",
        help="at a budget decision: the new limits (usd=…,tokens=…,hours=…)",
    )
    workspace(p)
    p.add_argument("--watch", action="store_true", help="print events as they happen")


def resume(p: Parser) -> None:
    workspace(p)
    run_options(p)
    p.add_argument(
        "--fresh-sessions",
        action="store_true",
        help="restart the current stage from its start with new worker and supervisor "
        "sessions (state, history and files are kept; the SQLite checkpoint file is moved "
        "aside, PostgreSQL drops the stage's sessions): the way on from damaged checkpoints",
    )


def status(p: Parser) -> None:
    workspace(p)
    p.add_argument("--json", action="store_true", help="one JSON object (a dict in a notebook)")


def events(p: Parser) -> None:
    workspace(p)
    p.add_argument(
        "--tail",
        "-n",
        type=int,
        metavar="N",
        help="last N events (default: 20 on the command line, every event in a notebook)",
    )
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
    p.add_argument(
        "--data", action="store_true", help="also each event's data (a column in a notebook)"
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


def show(p: Parser) -> None:
    p.add_argument(
        "target",
        help="paper (its PDF's pages, else its source), reviews (each reviewer's scores and the "
        "decision), PROCESS.md, a stage id (its outputs), or a path in the workspace",
    )
    p.add_argument(
        "--pdf",
        action="store_true",
        help="with `show paper`: print the absolute path of paper/paper.pdf (none built: exit 1)",
    )
    workspace(p)


def check(p: Parser) -> None:
    workspace(p)
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="documents to check (default: paper/paper.tex, else paper/paper.md)",
    )
    p.add_argument(
        "--results",
        action="append",
        metavar="FOLDER",
        help="folder of result files (CSV/TSV/JSON) numbers trace to (default: experiment)",
    )


def agents(p: Parser) -> None:
    """`agents check NAME [--stages FILE] [--workspace DIR]`."""
    actions = p.add_subparsers(dest="action", metavar="ACTION", title="actions", required=True)
    check = actions.add_parser(
        "check",
        help="start agent NAME, initialize it, print what it says of itself",
        description="start the coding agent NAME of the stage table, initialize it over the "
        "Agent Client Protocol, and print its name, version, protocol version and "
        "capabilities, or one line saying what failed",
    )
    check.add_argument("agent", metavar="NAME", help="an [agents.NAME] of the stage table")
    check.add_argument(
        "--stages",
        metavar="FILE",
        help="stage table TOML (default: the project's in the workspace, else the shipped one)",
    )
    check.add_argument(
        "--sandbox",
        choices=["auto", "bwrap", "none"],
        default=None,
        help="start the agent where a run would: in the bubblewrap sandbox with the network "
        "its table allows (auto, the default: when bwrap works here), bwrap (refuse without "
        "it), none",
    )
    workspace(check)


def check_model(p: Parser) -> None:
    p.add_argument(
        "--model",
        metavar="SPEC",
        help="the model to check (default: LIGHTSCIENTIST_MODEL, else offline)",
    )
    p.add_argument(
        "--base-url", metavar="URL", help="an OpenAI-compatible server (chat completions)"
    )


def history(p: Parser) -> None:
    workspace(p)
    p.add_argument("--json", action="store_true", help="one JSON list (a DataFrame in a notebook)")


def jobs(p: Parser) -> None:
    workspace(p)
    p.add_argument("--json", action="store_true", help="one JSON list (a DataFrame in a notebook)")


def tree(p: Parser) -> None:
    workspace(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="the tree file's record (experiment/tree.json; a dict in a notebook)",
    )
    p.add_argument(
        "--node",
        metavar="ID",
        help="one node: its summary, its files against its parent's, its job's log",
    )


def usage(p: Parser) -> None:
    workspace(p)
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.add_argument(
        "--by",
        choices=["stage", "worker", "model", "visit"],
        default="stage",
        help="sum the model calls by stage (default), worker, model or stage visit",
    )


def estimate(p: Parser) -> None:
    workspace(p)
    p.add_argument("--stages", metavar="FILE", help="stage table TOML (default: the project's)")
    p.add_argument("--model", metavar="SPEC", help="the model to price (default: the project's)")
    p.add_argument("--base-url", metavar="URL", help="an OpenAI-compatible server")
    p.add_argument("--price", metavar="PRICES", help="USD per million tokens, in=…,out=…")
    p.add_argument(
        "--from",
        dest="source",
        metavar="PATH",
        help="a recorded run of the same table: a workspace that ran with --record, its "
        "recordings folder or a run file (default: the workspace's own)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object")


def diff(p: Parser, *, tail: bool = True) -> None:
    """`diff [REF] [REF2] [--stat] [--against DIR] [-- PATH...]`: the words after the options
    (refs, `--`, paths; options written among them too) are taken apart by `diff_words`."""
    p.add_argument(
        "refs",
        nargs=argparse.REMAINDER if tail else "*",
        metavar="REF",
        help="a snapshot id, or STAGE / STAGE#VISIT (its finish); none: what the pending gate "
        "would approve against the last approved state; one: that snapshot against now",
    )
    workspace(p)
    p.add_argument("--stat", action="store_true", help="only the files and their counts")
    p.add_argument("--against", metavar="DIR", help="compare with another project (a fork)")


def rewind(p: Parser) -> None:
    p.add_argument("ref", metavar="STAGE[#VISIT]", help="the stage visit to go back to")
    workspace(p)


def fork(p: Parser) -> None:
    p.add_argument("ref", metavar="STAGE[#VISIT]", help="the stage visit whose start to copy")
    p.add_argument("new_dir", metavar="NEW_DIR", help="the new workspace (empty or missing)")
    workspace(p)


def diff_words(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The refs and the paths of a `diff` (the paths follow `--`); options written among
    the refs are set on `args`."""
    words = list(args.refs)
    paths = words[words.index("--") + 1 :] if "--" in words else []
    words = words[: words.index("--")] if "--" in words else words
    late = Parser(add_help=False)
    diff(late, tail=False)
    parsed = late.parse_args(words)
    for key in ("stat", "against", "workspace"):
        if getattr(parsed, key):
            setattr(args, key, getattr(parsed, key))
    return parsed.refs, paths


class _Words(argparse.Action):
    """Several words taken as one text: `remember warmup helps` is `remember "warmup helps"`."""

    def __call__(
        self,
        parser: Parser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        words = [values] if isinstance(values, str) else list(values or [])
        setattr(namespace, self.dest, " ".join(str(w) for w in words))


def remember(p: Parser) -> None:
    """`remember TEXT` (and `memory add TEXT`): an entry the researcher files."""
    p.add_argument("text", nargs="+", action=_Words, metavar="TEXT", help="what to remember")
    p.add_argument(
        "--kind",
        choices=[str(k) for k in MemoryKind],
        default=str(MemoryKind.LESSON),
        help="lesson (default: what worked, what failed and why), finding or paper",
    )
    p.add_argument(
        "--workspace",
        "-w",
        metavar="DIR",
        help="the project it belongs to (default: the current folder when it holds one, else none)",
    )


def memory(p: Parser) -> None:
    """`memory [--json]` lists the entries of the user's memory; `memory ACTION …` searches,
    adds, forgets or exports them."""
    p.add_argument(
        "--json", action="store_true", help="one JSON list (a list of dicts in a notebook)"
    )
    actions = p.add_subparsers(
        dest="action",
        metavar="ACTION",
        title="actions",
        description="none: list the entries, the newest first",
    )
    search = actions.add_parser(
        "search",
        help="the entries that match QUERY best",
        description="the entries that match QUERY best (full-text search, ranked by BM25)",
    )
    search.add_argument("query", nargs="+", action=_Words, metavar="QUERY", help="words to find")
    search.add_argument(
        "-k",
        type=int,
        default=SEARCH_K,
        metavar="N",
        help=f"at most N entries (default {SEARCH_K})",
    )
    search.add_argument(
        "--kind", choices=[str(k) for k in MemoryKind], help="only entries of this kind"
    )
    search.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,  # `memory --json search …` keeps it
        help="one JSON list, each entry with its score (a list of dicts in a notebook)",
    )
    add = actions.add_parser(
        "add", help="file TEXT (a lesson by default)", description="file TEXT in your memory"
    )
    remember(add)
    forget = actions.add_parser(
        "forget", help="remove entry ID for good", description="remove entry ID for good"
    )
    forget.add_argument("id", type=int, metavar="ID", help="the entry's id (see `memory`)")
    actions.add_parser(
        "export",
        help="every entry as JSON lines, to stdout",
        description="every entry as JSON lines, to stdout",
    )
