"""One declaration per operation (`app.ops.catalog`): the command line, the magic and the API
are built from it, and a session's defaults meet a run's options by one policy
(`app.ops.run_options`)."""

from __future__ import annotations

import dataclasses

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from lightscientist_jupyter import api, cli
from lightscientist_jupyter.app.memory import MemoryRequest, RememberRequest
from lightscientist_jupyter.app.ops import arguments, catalog
from lightscientist_jupyter.app.ops.run_options import (
    SESSION_DEFAULTS,
    RunOptions,
    Scope,
    SessionDefaults,
)
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.jupyter.magic import magics

# ------------------------------------------------------------------------- the policy

SESSION = SessionDefaults(
    model="openai:gpt-4.1-mini",
    record=True,
    budget="usd=5",
    price="in=1,out=2",
    checkpoints="postgresql://me:secret@db:5432/research",
    library=("refs.bib",),
)


@pytest.mark.unit
def test_a_new_run_takes_every_default_the_line_does_not_give():
    run = RunOptions(budget="tokens=10").with_defaults(SESSION)
    assert run.budget == "tokens=10"  # the line wins
    assert (run.model, run.record, run.price, run.library) == (
        "openai:gpt-4.1-mini",
        True,
        "in=1,out=2",
        ("refs.bib",),
    )


@pytest.mark.unit
def test_a_resume_fills_only_what_the_project_does_not_keep():
    kept = {"budget": {"tokens": 4000}, "price": "in=3,out=4", "library": ["mine.bib"]}
    run = RunOptions().with_defaults(SESSION, kept)
    assert (run.budget, run.price, run.library) == (None, None, None)  # the project's stay
    assert (run.model, run.record) == ("openai:gpt-4.1-mini", True)  # every run's
    assert run.checkpoints == SESSION.checkpoints  # nothing kept: the session's


@pytest.mark.unit
def test_a_default_naming_the_kept_database_brings_its_password():
    same = RunOptions().with_defaults(SESSION, {"checkpoints": "postgresql://me@db:5432/research"})
    assert same.checkpoints == SESSION.checkpoints
    other = RunOptions().with_defaults(SESSION, {"checkpoints": "postgresql://me@db:5432/other"})
    assert other.checkpoints is None  # another database: the project's own


@pytest.mark.unit
def test_record_off_in_the_session_leaves_the_project_recording():
    assert RunOptions().with_defaults(SessionDefaults(record=False)).record is None


@pytest.mark.unit
def test_the_run_options_are_the_parsers_destinations():
    parser = arguments.Parser()
    arguments.resume(parser)
    parsed = vars(parser.parse_args([]))
    assert {f.name for f in dataclasses.fields(RunOptions)} <= set(parsed)
    every = {d.name for d in SESSION_DEFAULTS if d.scope is not Scope.SESSION}
    assert every <= {f.name for f in dataclasses.fields(RunOptions)}


@pytest.mark.unit
def test_the_config_traits_are_the_declared_defaults():
    traits = magics.LightScientistMagics.class_traits(config=True)
    assert {d.name for d in SESSION_DEFAULTS} <= set(traits)
    for default in SESSION_DEFAULTS:
        assert traits[default.name].help == default.help


# ------------------------------------------------------------------------- the shells


@pytest.mark.unit
def test_every_shell_offers_every_operation():
    sub = next(a for a in cli.build_parser()._subparsers._group_actions)  # type: ignore[union-attr]
    assert list(sub.choices) == list(catalog.OPERATIONS)
    assert list(magics.commands()) == [*catalog.OPERATIONS, "help"]
    for name in catalog.OPERATIONS:
        assert cli.handler_of(name) is not None


@pytest.mark.unit
def test_an_operation_s_actions_are_the_same_request_in_every_shell():
    """`memory` has actions of its own (`search`, `add`…): the command line and the magic
    parse a line to the one request the operation performs, and `remember` is `memory add`."""
    memory, remember = catalog.OPERATIONS["memory"], catalog.OPERATIONS["remember"]
    line = ["--json", "search", "warmup", "runs", "-k", "3", "--kind", "lesson"]
    from_cli = memory.request_from(cli.build_parser().parse_args(["memory", *line]))
    from_magic = memory.request_from(magics.parser("memory").parse_args(line))
    assert (
        from_cli
        == from_magic
        == MemoryRequest("search", query="warmup runs", kind="lesson", k=3, json=True)
    )
    added = memory.request_from(magics.parser("memory").parse_args(["add", "seeds", "-w", "ws"]))
    remembered = remember.request_from(
        cli.build_parser().parse_args(["remember", "seeds", "-w", "ws"])
    )
    assert (added.text, added.kind, added.workspace) == ("seeds", "lesson", "ws")
    assert remembered == RememberRequest("seeds", "lesson", "ws")


@dataclasses.dataclass(frozen=True)
class Shout:
    text: str = ""
    times: int = 1


@dataclasses.dataclass(frozen=True)
class Said:
    message: str
    ok: bool = True


def _shout(request: Shout, door: catalog.Door) -> Said:
    if not request.text:
        return Said("nothing to shout", ok=False)
    return Said(f"{' '.join([request.text.upper()] * request.times)} (from the {door.source})")


def _shout_arguments(p):
    p.add_argument("text", nargs="?", default="")
    p.add_argument("--times", type=int, default=1)


@pytest.fixture
def shout(monkeypatch):
    declared = catalog.Operation(
        "shout", "say it louder", _shout_arguments, request=Shout, perform=_shout
    )
    monkeypatch.setitem(catalog.OPERATIONS, "shout", declared)
    return declared


def test_a_new_operation_reaches_the_command_line_the_magic_and_the_api(shout, capsys):
    assert cli.main(["shout", "hey", "--times", "2"]) == 0
    assert capsys.readouterr().out == "HEY HEY (from the command line)\n"
    assert cli.main(["shout"]) == 1  # not ok: exit 1, its line said
    assert capsys.readouterr().out == "nothing to shout\n"

    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "lightscientist_jupyter")
    with capture_output() as said:
        ip.run_line_magic("lightscientist", "shout hey")
        ip.run_line_magic("lightscientist", "help")
    assert said.stdout.startswith("HEY (from the notebook)\n")
    assert "  shout " in said.stdout and "say it louder" in said.stdout
    with pytest.raises(UsageError, match="%lightscientist shout: nothing to shout"):
        ip.run_line_magic("lightscientist", "shout")

    outcome = api.perform("shout", text="hey", times=3)
    assert outcome.ok and outcome.message == "HEY HEY HEY (from the notebook)"
    with pytest.raises(BadInput, match="shout takes no loudness"):
        api.perform("shout", loudness=11)


def test_the_api_performs_a_declared_operation(tmp_path):
    """`check-model` has no renderer of its own anywhere: every door shows its outcome."""
    checked = api.perform("check-model", model="offline")
    assert checked.ok and "calls tools by construction" in checked.message
    with pytest.raises(BadInput, match="'research' is not an operation to perform"):
        api.perform("research", goal="x")


def test_a_cancel_performed_in_the_kernel_that_runs_the_project_stops_it_there(tmp_path):
    """The kernel's own run takes the API's cancel at once, not through the inbox (where a
    run polls for it): the same door as `api.cancel` and the magic's."""
    ws = tmp_path / "project"
    run = api.start("find y", ws)  # manual: it waits at the idea's gate
    try:
        assert run.wait(until=("waiting_user", "failed"), timeout=120) == "waiting_user"
        outcome = api.perform("cancel", workspace=str(ws))
        assert outcome.ok and outcome.message == "cancelling the run"
        assert run.wait(timeout=60) == "cancelled"
        assert not list((ws / ".lightscientist" / "inbox").glob("*.json"))
        assert load_state(ws / ".lightscientist" / "state.json").reason == (
            "cancelled from the notebook"
        )
    finally:
        run.stop()
