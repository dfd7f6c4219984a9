"""The options of a run, and how a session's defaults meet them.

`RunOptions` is the one typed value behind `research` and `resume`: the command line and the
magic build it from their words (`from_args`), the API from its keywords, and `Project.create`
and `Project.open` take its `project_keywords()`. The field names are the options' argparse
destinations, the `Project` keywords and the API's keywords alike, so nothing renames them on
the way.

A notebook sets defaults once per session (`%config LightScientistMagics.budget = "usd=5"`);
`SESSION_DEFAULTS` declares them, and the magic's `%config` traits are made from it. Where a
default applies is the one policy of `with_defaults`, the same for every run the kernel
starts or resumes, whichever door asked (the magic, the API, the dashboard, a card):

- an option given on the line (or as a keyword) always wins;
- `model`, `base_url` and `record` (scope `EVERY_RUN`) fill in for every run, new or resumed;
- the settings a project keeps (scope `UNLESS_KEPT`: budget, price, checkpoints, ray, job time
  limit, library) fill in for a new run, and for a resumed one only when the project keeps
  none of its own. A resume must not undo what the project holds: `--budget` on a resume
  *sets* the limits, so a session budget applied there would take back a raise made at a
  budget decision.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.workspace import Workspace


class Scope(StrEnum):
    """Which runs a session default reaches."""

    EVERY_RUN = "every run"
    """Every run the kernel starts or resumes."""
    UNLESS_KEPT = "unless kept"
    """New runs, and resumed ones whose project keeps no value of its own."""
    SESSION = "session"
    """Not a run option: where the session's commands look (mode of new runs, workspace)."""


@dataclasses.dataclass(frozen=True)
class Default:
    """One default a notebook session sets with `%config LightScientistMagics.<name>`."""

    name: str
    kind: type
    """`str`, `bool` or `list` (of paths)."""
    scope: Scope
    help: str
    choices: tuple[str, ...] = ()
    """For a `str` with a closed set of values (the mode)."""
    initial: Any = None
    """The value before any `%config`."""


SESSION_DEFAULTS: tuple[Default, ...] = (
    Default(
        "model",
        str,
        Scope.EVERY_RUN,
        "The model of the runs this kernel starts or resumes: offline, provider:model, or a "
        "model name served at base_url (default: LIGHTSCIENTIST_MODEL, else offline).",
    ),
    Default(
        "base_url",
        str,
        Scope.EVERY_RUN,
        "An OpenAI-compatible server for the model (e.g. a local Ollama or vLLM).",
    ),
    Default(
        "record",
        bool,
        Scope.EVERY_RUN,
        "Record every model call of the runs this kernel starts or resumes "
        "(.lightscientist/recordings/), as --record does.",
        initial=False,
    ),
    Default(
        "mode",
        str,
        Scope.SESSION,
        "The mode of new runs: auto (gates pass) or manual (gates wait).",
        choices=("auto", "manual"),
        initial="manual",
    ),
    Default(
        "workspace",
        str,
        Scope.SESSION,
        "The project folder used when --workspace is not given.",
        initial=".",
    ),
    Default(
        "budget",
        str,
        Scope.UNLESS_KEPT,
        "--budget of new runs, and of resumed ones without limits: usd=…,tokens=…,hours=…",
    ),
    Default(
        "price",
        str,
        Scope.UNLESS_KEPT,
        "--price of new runs, and of resumed ones without a price: in=…,out=… (USD per 1M)",
    ),
    Default(
        "checkpoints",
        str,
        Scope.UNLESS_KEPT,
        "--checkpoints of new runs: sqlite:///PATH or postgresql://…",
    ),
    Default(
        "ray",
        str,
        Scope.UNLESS_KEPT,
        "--ray of new runs (and resumed ones that keep none): a Ray cluster for jobs",
    ),
    Default(
        "library",
        list,
        Scope.UNLESS_KEPT,
        "--library of new runs (and resumed ones that keep none): .bib / CSL-JSON files or folders",
        initial=(),
    ),
    Default(
        "job_time_limit",
        str,
        Scope.UNLESS_KEPT,
        "--job-time-limit of new runs (and resumed ones that keep none): 30m, 6h…",
    ),
)
"""The `%config LightScientistMagics` defaults, in the order `%config` lists them."""


@dataclasses.dataclass(frozen=True)
class SessionDefaults:
    """The values of `SESSION_DEFAULTS` a session holds now (None: not set)."""

    model: str | None = None
    base_url: str | None = None
    record: bool = False
    mode: str = "manual"
    workspace: str = "."
    budget: str | None = None
    price: str | None = None
    checkpoints: str | None = None
    ray: str | None = None
    library: tuple[str, ...] = ()
    job_time_limit: str | None = None

    @classmethod
    def of(cls, holder: object) -> SessionDefaults:
        """The defaults an object holds as attributes of the same names (the magic's traits);
        an empty string counts as not set."""
        values: dict[str, Any] = {}
        for default in SESSION_DEFAULTS:
            value = getattr(holder, default.name, default.initial)
            if default.kind is list:
                value = tuple(str(v) for v in value or ())
            elif default.kind is bool:
                value = bool(value)
            elif value == "" and default.initial is None:
                value = None
            values[default.name] = value
        return cls(**values)

    def over(self, lab: Mapping[str, str], explicit: set[str]) -> SessionDefaults:
        """These defaults over JupyterLab's (`app.lab_defaults`): a model or a budget the
        session has not set, and the mode unless `%config` set it (`explicit`: the names the
        session's configuration holds), come from there."""
        filled: dict[str, Any] = {}
        for name in ("model", "budget"):
            if getattr(self, name) is None and lab.get(name):
                filled[name] = lab[name]
        if "mode" not in explicit and lab.get("mode"):
            filled["mode"] = lab["mode"]
        return dataclasses.replace(self, **filled)


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """How to run a project: the options `research` and `resume` share (see `arguments`)."""

    model: str | None = None
    base_url: str | None = None
    record: bool | None = None
    """None: as the project keeps it (a project started with --record keeps recording)."""
    replies: str | None = None
    skip_model_check: bool = False
    library: tuple[str, ...] | None = None
    until: str | None = None
    checkpoints: str | None = None
    ray: str | None = None
    job_time_limit: str | None = None
    budget: str | None = None
    price: str | None = None
    sandbox: str | None = None
    allow_network: bool | None = None
    limits: str | None = None
    no_memory: bool | None = None
    """`--no-memory`: this run recalls nothing from the user's memory and files nothing."""

    @classmethod
    def from_args(cls, args: argparse.Namespace | Mapping[str, Any]) -> RunOptions:
        """The options a parser (or a mapping of keywords) holds; what it lacks stays unset."""
        given = vars(args) if isinstance(args, argparse.Namespace) else dict(args)
        values = {f.name: given[f.name] for f in FIELDS if given.get(f.name) is not None}
        if values.get("library") is not None:
            values["library"] = tuple(str(p) for p in values["library"])
        return cls(**values)

    def with_defaults(
        self, defaults: SessionDefaults, kept: Mapping[str, Any] | None = None
    ) -> RunOptions:
        """These options with a session's defaults filled in, by the policy of this module;
        `kept` holds the settings the project to resume keeps (`kept_settings`; None for a new
        project). A default naming the database the project keeps is no other setting: it
        brings the password the project does not keep, and is used."""
        kept = kept or {}
        filled: dict[str, Any] = {}
        for default in SESSION_DEFAULTS:
            if default.scope is Scope.SESSION or getattr(self, default.name) is not None:
                continue
            value = getattr(defaults, default.name)
            if not value:  # not set (None, an empty list), or `record` off: nothing to fill
                continue
            if default.scope is Scope.UNLESS_KEPT and kept.get(default.name):
                if default.name != "checkpoints" or not _same_database(value, kept[default.name]):
                    continue
            filled[default.name] = value
        return dataclasses.replace(self, **filled)

    def project_keywords(self) -> dict[str, Any]:
        """The keywords of `Project.create` / `Project.open` (the model check as theirs)."""
        out = {f.name: getattr(self, f.name) for f in FIELDS if f.name != "skip_model_check"}
        out["record"] = bool(self.record)
        out["library"] = list(self.library) if self.library is not None else None
        return out


FIELDS = dataclasses.fields(RunOptions)


def kept_settings(ws: Workspace) -> dict[str, Any]:
    """The `UNLESS_KEPT` settings the project in `ws` keeps a value of: its state's settings
    and budget, and its literature settings' library."""
    from lightscientist_jupyter.literature.config import LiteratureConfig

    state = load_state(ws.state_file)
    settings = state.settings
    kept = {
        name: settings[name]
        for name in ("price", "checkpoints", "ray", "job_time_limit")
        if settings.get(name)
    }
    if (state.budget or {}).get("project"):
        kept["budget"] = dict(state.budget["project"])
    if library := LiteratureConfig.load(ws.root, env=False).library:
        kept["library"] = [str(p) for p in library]
    return kept


def _same_database(url: str, kept: object) -> bool:
    from lightscientist_jupyter.runtime.checkpoints.url import redact  # imports LangGraph

    return redact(url) == kept
