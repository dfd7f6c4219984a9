"""`%lightscientist` on an in-process `InteractiveShell`: every subcommand, quoting, bad input.

The runs are real (the offline model, real files); `research` and `resume` return at once
and the tests wait on the API's run handle. Display output is captured with
`capture_output`.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.display import Image, Markdown
from IPython.utils.capture import capture_output
from support.papers import REVIEW_TABLE, write_paper, write_reviews
from support.planting import SECRET, sandboxed
from support.slow import whole_project
from support.waiting import wait_for

from lightscientist_jupyter import api
from lightscientist_jupyter.app.ops.run_options import SESSION_DEFAULTS
from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.jupyter.dashboard.display import dashboard_of
from lightscientist_jupyter.jupyter.dashboard.graph import TableDiagram
from lightscientist_jupyter.jupyter.magic.magics import LightScientistMagics, commands
from lightscientist_jupyter.workspace import Workspace

WIDGET = "application/vnd.jupyter.widget-view+json"
RUN_TIMEOUT = 120


@pytest.fixture(scope="module")
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "lightscientist_jupyter")
    yield shell
    api.stop_all()


@pytest.fixture(autouse=True)
def fresh_defaults(ip):
    magics = ip.magics_manager.registry["LightScientistMagics"]
    yield magics
    for default in SESSION_DEFAULTS:  # every run of the kernel takes them: none may stay set
        setattr(magics, default.name, [] if default.kind is list else default.initial)


def ls(ip, line: str):
    return ip.run_line_magic("lightscientist", line)


@pytest.fixture(scope="module")
@whole_project
def done(ip, tmp_path_factory):
    """A project run with `research "find x" --mode auto` to done; (workspace, outputs, s)."""
    ws = tmp_path_factory.mktemp("magic") / "done project"
    started = time.monotonic()
    with capture_output() as cap:
        assert ls(ip, f'research "find x" --mode auto -w "{ws}"') is None
    returned_after = time.monotonic() - started
    run = api.current(ws)
    assert run is not None and run.alive
    assert run.wait(timeout=RUN_TIMEOUT) == "done", run.status()
    # the run's thread logs its last events after the status turns done: let it end, so the
    # log the tests compare with is complete
    wait_for(lambda: not run.alive, "the run's thread to end", within=30)
    return ws, cap.outputs, returned_after


def logged(ws: Path) -> list[dict]:
    """Every event of the project's log, as the commands read it."""
    text = Workspace.at(ws).events_file.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_loading_the_package_imports_no_jupyter_code():
    code = (
        "import sys, lightscientist_jupyter as p; assert callable(p.load_ipython_extension); "
        "print(sorted(m for m in sys.modules if m.startswith(('ipywidgets', 'IPython', "
        "'lightscientist_jupyter.jupyter'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_research_keeps_the_quoted_goal_and_runs_to_done(done):
    ws, outputs, returned_after = done
    state = load_state(Workspace.at(ws).state_file)
    assert (state.goal, state.mode, state.status) == ("find x", "auto", "done")
    assert returned_after < 15  # it returned long before the run ended
    bundle = outputs[0].data
    assert WIDGET in bundle and 'data-stage="idea.survey"' in bundle["text/html"]
    assert "LightScientist · find x" in bundle["text/plain"]
    assert (ws / "paper" / "paper.tex").is_file()


def test_status_shows_the_dashboard_or_a_dict(ip, done):
    ws = done[0]
    info = ls(ip, f'status --json -w "{ws}"')
    assert {"status", "stage", "mode", "goal", "pending"} <= set(info)
    assert info["status"] == "done" and info["pending"] is None
    with capture_output() as cap:
        assert ls(ip, f'status -w "{ws}"') is None
    bundle = cap.outputs[0].data
    assert WIDGET in bundle
    assert 'data-stage="done" data-state="done"' in bundle["text/html"]
    assert "done at done" in bundle["text/plain"]


def test_show_renders_markdown_images_tables_and_stage_outputs(ip, done):
    ws = done[0]
    process = ls(ip, f'show PROCESS.md -w "{ws}"')
    assert isinstance(process, Markdown) and "idea.survey" in process.data
    with capture_output() as cap:
        assert ls(ip, f'show paper -w "{ws}"') is None
    mimes = [set(o.data) for o in cap.outputs]
    assert sum("image/png" in m for m in mimes) >= 2  # the PDF's pages, drawn
    header = cap.outputs[0].data["text/markdown"]
    assert header.startswith("**") and "paper.pdf — " in header and " pages" in header
    frame = ls(ip, f'show experiment/summary.csv -w "{ws}"')
    expected = pd.read_csv(ws / "experiment" / "summary.csv")
    assert isinstance(frame, pd.DataFrame) and not expected.empty and frame.equals(expected)
    assert isinstance(ls(ip, f'show paper/figures/figure1.png -w "{ws}"'), Image)
    with capture_output() as cap:
        assert ls(ip, f'show experiment.analyze -w "{ws}"') is None
    shown = "".join(o.data.get("text/markdown", "") for o in cap.outputs)
    assert "experiment/analysis.md" in shown and "experiment/summary.csv" in shown
    assert any("text/html" in o.data for o in cap.outputs)  # the CSV, as a DataFrame


@pytest.fixture
def reviewed(tmp_path, write_table) -> Path:
    """A project of `REVIEW_TABLE` whose paper/paper.tex was reviewed in two rounds."""
    table = load_table(write_table(tmp_path / "table", REVIEW_TABLE))
    ws = Workspace.at(tmp_path / "ws")
    ResearchController.create(ws, "find x", mode="manual", table=table)
    (ws.root / "paper").mkdir()
    (ws.root / "paper" / "paper.tex").write_text("\\documentclass{article}\n", encoding="utf-8")
    write_reviews(ws.root)
    return ws.root


def test_show_paper_shows_the_pdf_s_pages_as_images(ip, reviewed, tmp_path):
    write_paper(reviewed, tmp_path / "tex", pages=2)
    with capture_output() as cap:
        assert ls(ip, f'show paper -w "{reviewed}"') is None
    head, *pages = [o.data for o in cap.outputs]
    assert head["text/markdown"] == f"**{reviewed}/paper/paper.pdf — 2 pages**"
    assert len(pages) == 2
    for page in pages:
        png = base64.b64decode(page["image/png"])
        assert png.startswith(b"\x89PNG\r\n")
        width = int.from_bytes(png[16:20], "big")  # the IHDR's width: a page at 100 dpi
        assert 800 <= width <= 900
    assert sorted(p.name for p in (reviewed / "paper").iterdir()) == [
        "paper.pdf",
        "paper.tex",
        "reviews",
    ]  # nothing drawn into the workspace


def test_show_paper_without_a_pdf_shows_the_latex_source_and_says_so(ip, reviewed):
    with capture_output() as cap:
        assert ls(ip, f'show paper -w "{reviewed}"') is None
    [line, source] = [o.data["text/markdown"] for o in cap.outputs]
    assert line == (
        "*No PDF was built (paper/paper.pdf does not exist); its source is paper/paper.tex.*"
    )
    assert source == "```latex\n\\documentclass{article}\n\n```"


def test_show_of_latex_and_bibtex_is_a_code_block_no_backticks_can_close(ip, reviewed):
    (reviewed / "paper" / "refs.bib").write_text("@article{a, title={```x```}}\n", "utf-8")
    shown = ls(ip, f'show paper/refs.bib -w "{reviewed}"')
    assert shown.data == "````bibtex\n@article{a, title={```x```}}\n\n````"


def test_show_paper_pdf_prints_its_path_or_says_there_is_none(ip, reviewed, tmp_path, capsys):
    assert _refused(ip, f'show paper --pdf -w "{reviewed}"') == (
        f"%lightscientist show: no PDF was built ({reviewed}/paper/paper.pdf does not exist)"
    )
    write_paper(reviewed, tmp_path / "tex")
    assert ls(ip, f'show paper --pdf -w "{reviewed}"') is None
    assert capsys.readouterr().out == f"{reviewed}/paper/paper.pdf\n"
    assert _refused(ip, f'show reviews --pdf -w "{reviewed}"') == (
        "%lightscientist show: --pdf goes with `show paper`, not `show reviews`"
    )


def test_show_reviews_is_a_table_of_scores_and_the_decision(ip, reviewed):
    with capture_output() as cap:
        assert ls(ip, f'show reviews -w "{reviewed}"') is None
    frame_html, decision = cap.outputs[0].data["text/html"], cap.outputs[1].data["text/markdown"]
    assert "<th>overall</th>" in frame_html and "revise" in frame_html
    assert decision.splitlines() == [
        "**round 2: mean 6 against accept 6 — accept**",
        "",
        "round 1 asked for:",
        "- add an ablation without warmup",
        "- caption Figure 1 with its seeds",
    ]


@pytest.fixture
def planted(done, tmp_path):
    """The done project with links a sandboxed command planted to a key outside it (the
    paper's source and PDF, a stage output, a folder, a figure); taken away again after the
    test."""
    ws = done[0]
    key = tmp_path / "id_rsa"
    key.write_text(SECRET)
    figure = tmp_path / "id_rsa.png"
    figure.write_text(SECRET)
    sandboxed(
        ws,
        f"mv paper/paper.tex paper/paper.real.tex && ln -s {key} paper/paper.tex"
        f" && mv paper/paper.pdf paper/paper.real.pdf && ln -s {key} paper/paper.pdf"
        f" && mv experiment/summary.csv experiment/summary.real.csv"
        f" && ln -s {key} experiment/summary.csv"
        f" && ln -s {tmp_path} keys && ln -s {figure} paper/figures/stolen.png"
        " && printf '# Figures\\n\\n![the loss](figures/stolen.png)\\n' > paper/figures.md",
    )
    yield Workspace.at(ws).root, key
    planted = ("paper/paper.tex", "paper/paper.pdf", "experiment/summary.csv", "keys")
    for name in (*planted, "paper/figures/stolen.png"):
        (ws / name).unlink()
    (ws / "paper" / "figures.md").unlink()
    (ws / "paper" / "paper.real.tex").rename(ws / "paper" / "paper.tex")
    (ws / "paper" / "paper.real.pdf").rename(ws / "paper" / "paper.pdf")
    (ws / "experiment" / "summary.real.csv").rename(ws / "experiment" / "summary.csv")


def _refused(ip, line: str) -> str:
    with pytest.raises(UsageError) as info:
        ls(ip, line)
    return str(info.value)


def test_show_never_follows_a_link_planted_in_the_workspace(ip, planted):
    root, key = planted
    never = "does not follow links in a workspace"
    assert _refused(ip, f'show paper -w "{root}"') == (
        f"%lightscientist show: {root}/paper/paper.tex: is a symbolic link (to {key}); "
        f"LightScientist {never}"
    )
    pdf = _refused(ip, f'show paper --pdf -w "{root}"')  # the PDF's path: not a link's
    assert f"{root}/paper/paper.pdf: is a symbolic link (to {key})" in pdf, pdf
    assert _refused(ip, f'show keys/id_rsa -w "{root}"') == (
        f"%lightscientist show: {root}/keys: is a symbolic link (to {key.parent}); "
        f"LightScientist {never}"
    )
    # a path is the workspace's: `/x` is its x, and '..' does not leave it
    assert _refused(ip, f'show {key} -w "{root}"') == (
        f"%lightscientist show: {root}{key} does not exist"
    )
    assert _refused(ip, f'show ../../../../../../..{key} -w "{root}"').endswith(
        f"leaves the workspace {root} ('..')"
    )
    with capture_output() as cap:  # a stage's outputs: each refusal in its place
        assert ls(ip, f'show experiment.analyze -w "{root}"') is None
        assert ls(ip, f'show paper/figures.md -w "{root}"') is None
    shown = [o.data for o in cap.outputs]
    markdown = "\n".join(d.get("text/markdown", "") for d in shown)
    assert f"*{root}/experiment/summary.csv: is a symbolic link (to {key});" in markdown
    assert (
        f"*{root}/paper/figures/stolen.png: is a symbolic link (to {key.parent}/id_rsa.png);"
        in markdown
    )
    everything = json.dumps(shown)
    assert "PRIVATE KEY" not in everything
    assert base64.b64encode(SECRET.encode()).decode()[:40] not in everything


def test_events_and_workers_return_dataframes(ip, done):
    ws = done[0]
    log = logged(ws)
    frame = ls(ip, f'events -w "{ws}"')
    assert isinstance(frame, pd.DataFrame)
    assert list(frame["seq"]) == [e["seq"] for e in log]  # every event by default
    assert list(frame.columns)[:5] == ["seq", "time", "seconds", "layer", "type"]
    assert "data" not in frame.columns
    assert frame["time"].iloc[-1] == pd.Timestamp(int(log[-1]["ts"]), unit="s")  # to the second
    assert frame["seconds"].iloc[0] == 0.0
    assert frame["seconds"].iloc[-1] == round(log[-1]["ts"] - log[0]["ts"], 3)
    last = ls(ip, f'events -w "{ws}" --tail 20 --data')
    assert list(last["seq"]) == [e["seq"] for e in log][-20:]
    assert list(last["data"]) == [e.get("data") for e in log][-20:]
    assert last["seconds"].iloc[-1] == frame["seconds"].iloc[-1]
    layer1 = ls(ip, f'events -w "{ws}" --tail 500 --layer 1')
    assert list(layer1["seq"]) == [e["seq"] for e in log if e["layer"] == 1]
    stage = ls(ip, f'events -w "{ws}" -n 5 --type stage.')
    assert list(stage["seq"]) == [e["seq"] for e in log if e["type"].startswith("stage.")][-5:]
    w1 = ls(ip, f'events -w "{ws}" --worker w1 --json')
    assert [e["seq"] for e in w1] == [e["seq"] for e in log if e["worker_id"] == "w1"]
    assert w1[0]["time"] == next(e["ts"] for e in log if e["seq"] == w1[0]["seq"])
    workers = ls(ip, f'workers -w "{ws}"')
    assert isinstance(workers, pd.DataFrame)
    assert {"supervisor", "w1"} <= set(workers["id"])
    assert workers.loc[workers["id"] == "w1", "model_calls"].item() == sum(
        1 for e in log if e["worker_id"] == "w1" and e["type"] == "model.call"
    )
    as_json = ls(ip, f'workers --json -w "{ws}"')
    assert [w["id"] for w in as_json] == list(workers["id"])
    with capture_output() as cap:
        ls(ip, f'events --follow --layer 2 -w "{ws}"')
    assert WIDGET in cap.outputs[0].data
    stream = dashboard_of(api.open_project(ws)).events
    assert stream.layer == 2 and {e["layer"] for e in stream.visible()} == {2}


def test_stages_and_help(ip, capsys, tmp_path):
    diagram = ls(ip, "stages")
    assert isinstance(diagram, TableDiagram)
    drawn = re.findall(r'data-stage="([^"]+)"', diagram._repr_html_())
    assert drawn == [*load_table().ids(), "done"]
    ls(ip, "help")
    out = capsys.readouterr().out
    assert all(name in out for name in commands())
    overview = out
    ls(ip, "help reply")
    assert "--to STAGE" in capsys.readouterr().out
    assert ls(ip, "research -h") is None
    assert "--base-url" in capsys.readouterr().out
    ls(ip, "")
    assert capsys.readouterr().out == overview


def test_cancel_a_project_nobody_runs(ip, done, capsys):
    ls(ip, f'cancel -w "{done[0]}"')
    assert capsys.readouterr().out == "the project is done; nothing to cancel\n"
    assert load_state(Workspace.at(done[0]).state_file).status == "done"  # it stays finished


@pytest.mark.parametrize(
    "line",
    [
        "bogus",
        'research "find x',
        "research",
        "research x --mode fast",
        "research x --stage nope -w {new}",
        "research x --model nope:thing -w {new}",
        "research x --stages {missing}",
        "status -w {new}",
        "stages --stages {missing}",
        "help nope",
    ],
)
def test_bad_input_is_a_usage_error_without_traceback(ip, tmp_path, capsys, line):
    refused(ip, capsys, tmp_path, line)


@pytest.mark.parametrize(
    "line",
    [
        "research again -w {done}",
        "reply maybe -w {done}",
        "reply y -w {done}",
        "events --tail -1 -w {done}",
        "events --layer 4 -w {done}",
        "show nothing.md -w {done}",
        "cancel w99 -w {done}",
        "cancel w1 -w {done}",
    ],
)
def test_bad_input_on_a_finished_project_is_a_usage_error(ip, done, tmp_path, capsys, line):
    refused(ip, capsys, tmp_path, line.replace("{done}", f'"{done[0]}"'))


def refused(ip, capsys, tmp_path: Path, line: str) -> None:
    """`line` raises a `UsageError` (as a call and as a cell), printed without a traceback."""
    line = line.format(new=f'"{tmp_path / "new"}"', missing=f'"{tmp_path / "missing.toml"}"')
    with pytest.raises(UsageError):
        ls(ip, line)
    result = ip.run_cell(f"%lightscientist {line}")
    assert isinstance(result.error_in_exec, UsageError)
    err = capsys.readouterr().err
    assert "UsageError" in err and "Traceback" not in err
    assert api.current(tmp_path / "new") is None


@pytest.mark.parametrize("command", ["resume", "status", "tree"])
def test_a_folder_without_a_project_says_what_to_do_in_the_magics_words(ip, tmp_path, command):
    """Not the command line's `lightscientist research …`: the subcommand both shells share,
    and `--workspace` for a project elsewhere."""
    refusal = _refused(ip, f'{command} -w "{tmp_path}"')
    assert refusal.startswith(f"%lightscientist {command}: no LightScientist project in {tmp_path}")
    assert refusal.endswith(
        'start one there with `research "<goal>"`, or name a project\'s folder with --workspace'
    )
    assert "lightscientist research" not in refusal


def test_config_sets_session_defaults(ip, tmp_path, fresh_defaults):
    ip.run_line_magic("config", 'LightScientistMagics.model = "nope:thing"')
    assert fresh_defaults.model == "nope:thing"
    with pytest.raises(UsageError, match="nope"):
        ls(ip, f'research "cfg" -w "{tmp_path / "a"}"')
    ip.run_line_magic("config", "LightScientistMagics.model = None")
    ip.run_line_magic("config", 'LightScientistMagics.mode = "auto"')
    ip.run_line_magic("config", f'LightScientistMagics.workspace = "{tmp_path / "b"}"')
    with capture_output():
        ls(ip, 'research "configured"')
    run = api.current(tmp_path / "b")
    assert run is not None
    run.stop()
    assert load_state(Workspace.at(tmp_path / "b").state_file).mode == "auto"


def _decisions(ws: Path) -> list[dict]:
    return load_state(Workspace.at(ws).state_file).decisions


def _until(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.slow
def test_reply_resume_and_cancel_in_manual_mode(ip, tmp_path, capsys):
    ws = tmp_path / "manual"
    with capture_output():
        ls(ip, f'research "find y" -w "{ws}"')  # manual is the default mode
    run = api.current(ws)
    assert run.wait(until=("waiting_user", "failed"), timeout=RUN_TIMEOUT) == "waiting_user"

    # a run of this kernel: the reply goes straight to the controller
    with capture_output() as cap:
        ls(ip, f'reply y -m "fine" -w "{ws}"')
    assert "idea.gate approved" in cap.stdout and WIDGET in cap.outputs[0].data
    assert [(d["stage"], d["source"], d["comment"]) for d in _decisions(ws)] == [
        ("idea.gate", "magic", "fine")
    ]
    assert run.stop() == "running" and not run.alive

    # resume: a new run on a thread; asking again returns the same run
    with capture_output() as cap:
        ls(ip, f'resume -w "{ws}"')
    assert WIDGET in cap.outputs[0].data
    again = api.current(ws)
    assert again is not None and again is not run
    with capture_output():
        ls(ip, f'resume -w "{ws}"')
    assert api.current(ws) is again
    assert again.wait(until=("waiting_user", "failed"), timeout=RUN_TIMEOUT) == "waiting_user"

    # the run in this kernel takes a reply written by the command line (through the inbox)
    proc = subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", "reply", "y", "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "taken by the run" in proc.stdout
    assert [(d["stage"], d["source"]) for d in _decisions(ws)][-1] == ("experiment.gate", "cli")
    assert again.wait(until=("waiting_user", "failed"), timeout=RUN_TIMEOUT) == "waiting_user"
    again.stop()
    # stop() waits 30 s for the run's thread; on a loaded machine closing its sessions can
    # take longer, and until the thread ends it holds the run lock: a reply then is queued
    # for that run, rightly. What follows is about a project nobody runs.
    _until(lambda: not again.alive, timeout=RUN_TIMEOUT)

    # nobody runs it: the project resumes here, and the reply takes effect in that run
    with pytest.raises(UsageError, match="not a stage"):
        ls(ip, f'reply n --to nowhere -w "{ws}"')
    with capture_output() as cap:
        ls(ip, f'reply n --to paper.write -m "again" -w "{ws}"')
    assert "resumes in this kernel" in cap.stdout
    _until(lambda: len(_decisions(ws)) == 3)
    last = _decisions(ws)[-1]
    assert (last["stage"], last["approve"], last["to"], last["source"]) == (
        "paper.review",
        False,
        "paper.write",
        "magic",
    )
    third = api.current(ws)
    assert third is not None and third.alive

    ls(ip, f'cancel -w "{ws}"')
    assert "cancelling" in capsys.readouterr().out
    assert third.wait(timeout=60) == "cancelled"
    assert load_state(Workspace.at(ws).state_file).status == "cancelled"


def test_the_magics_class_is_configurable(ip):
    assert isinstance(ip.magics_manager.registry["LightScientistMagics"], LightScientistMagics)
    traits = LightScientistMagics.class_traits(config=True)
    assert {"model", "base_url", "mode", "workspace"} <= set(traits)


def test_the_settings_editors_defaults_sit_below_config(ip, tmp_path, monkeypatch, fresh_defaults):
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jupyter-config"))
    from lightscientist_jupyter.app import lab_defaults

    lab_defaults.save({"model": "offline", "mode": "auto", "budget": "tokens=5000"})
    fresh_defaults.config.LightScientistMagics.pop("mode", None)  # as in a fresh kernel
    now = fresh_defaults.defaults()
    assert (now.model, now.mode, now.budget) == ("offline", "auto", "tokens=5000")
    ip.run_line_magic("config", 'LightScientistMagics.mode = "manual"')
    ip.run_line_magic("config", 'LightScientistMagics.budget = "usd=1"')
    now = fresh_defaults.defaults()
    assert (now.model, now.mode, now.budget) == ("offline", "manual", "usd=1")
