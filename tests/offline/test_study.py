"""The offline study kit: its scripts run for real, in the order a project runs them.

Nothing is mocked: the shipped scripts (with the modules they import) are written into a
temporary workspace and run with this interpreter, exactly as the offline worker runs them
(`python <path>` from the workspace root), and the builders are fed the files they wrote.
"""

from __future__ import annotations

import csv
import math
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lightscientist_jupyter import offline
from lightscientist_jupyter.literature import Literature
from lightscientist_jupyter.offline.study import briefs, idea, plans, probes
from lightscientist_jupyter.offline.study.files import (
    ANALYSIS,
    PROBE,
    analysis_files,
    probe_path,
    script_files,
    write_into,
)
from lightscientist_jupyter.offline.study.scripts.study_design import (
    CANDIDATES,
    DISCLAIMER,
    N_RUNS,
    PROBE_CANDIDATES,
    STUDY_QUESTION,
)
from lightscientist_jupyter.runtime.latex_tools import build_pdf
from lightscientist_jupyter.runtime.sandbox import bwrap
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkerShell
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy

OFFLINE_LIBRARY = Path(offline.__file__).parent / "library" / "warmup.bib"
GOAL = 'Which cat food do cats prefer? | a "quoted" goal'
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(ws: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
    proc = subprocess.run(
        [sys.executable, *args], cwd=ws, env=env, capture_output=True, text=True, timeout=120
    )
    if ok:
        assert proc.returncode == 0, f"{args}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


SCRIPTS = (
    "experiment/run_experiment.py",
    "paper/figures/make_figures.py",
    "paper/build_paper.py",
    "paper/check_paper.py",
)


ANALYZE = ("-m", "jupyter", "execute", "--inplace", ANALYSIS)
"""Runs the analysis notebook as a researcher would (`jupyter execute`, in its folder)."""


def write_scripts(ws: Path) -> None:
    for target in SCRIPTS:
        write_into(ws, script_files(target))
    write_into(ws, analysis_files())


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow
def test_the_study_runs_end_to_end_as_a_project_runs_it(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    write_scripts(ws)
    exp = ws / "experiment"

    # setup: the smoke check writes nothing
    out = run(ws, "experiment/run_experiment.py", "--check").stdout
    assert re.match(r"ok final_loss=\d", out), out
    assert not (exp / "results.csv").exists()

    # loop visit 1
    out = run(ws, "experiment/run_experiment.py", "--batches", "2", "--batch", "1").stdout
    assert "pending: batch 2" in out.splitlines()[-1]
    first = rows(exp / "results.csv")
    assert {r["run_id"] for r in first} == {f"r{i:02d}" for i in range(1, 19, 2)}
    status = run(ws, "experiment/run_experiment.py", "--batches", "2", "--status").stdout
    assert "batch 1: done" in status and "batch 2: pending" in status
    assert "all batches done" not in status

    # loop visit 2
    run(ws, "experiment/run_experiment.py", "--batch", "2", "--batches", "2")
    status = run(ws, "experiment/run_experiment.py", "--status", "--batches", "2").stdout
    assert "batch 1: done" in status and "batch 2: done" in status
    assert "all batches done" in status

    # rerunning a batch replaces its rows: no duplicates, identical values (deterministic)
    before = (exp / "results.csv").read_text(encoding="utf-8")
    run(ws, "experiment/run_experiment.py", "--batch", "1", "--batches", "2")
    assert (exp / "results.csv").read_text(encoding="utf-8") == before
    results = rows(exp / "results.csv")
    assert list(results[0]) == ["run_id", "condition", "seed", "metric", "value", "status"]
    keys = [(r["run_id"], r["metric"]) for r in results]
    assert len(keys) == N_RUNS * 3 == 54 and len(set(keys)) == 54
    assert [r["run_id"] for r in results] == sorted(r["run_id"] for r in results)
    assert {r["status"] for r in results} == {"ok"}
    by_run: dict[str, dict[str, str]] = {}
    for r in results:
        by_run.setdefault(r["run_id"], {})[r["metric"]] = r["value"]
    for rid, m in by_run.items():
        assert m["diverged"] in ("0", "1"), rid
        assert math.isinf(float(m["final_loss"])) == (m["diverged"] == "1"), rid
        assert math.isfinite(float(m["best_loss"])), rid
    curves = rows(exp / "curves.csv")
    assert list(curves[0]) == ["run_id", "step", "loss"]
    assert len({(c["run_id"], c["step"]) for c in curves}) == len(curves)
    assert {c["run_id"] for c in curves} == set(by_run)
    log = (exp / "log.md").read_text(encoding="utf-8")
    assert log.startswith("# Experiment log")
    assert len([line for line in log.splitlines() if line.startswith("- ")]) == 3

    # a batch beyond the runs is empty and changes nothing
    out = run(ws, "experiment/run_experiment.py", "--batch", "19", "--batches", "20").stdout
    assert "empty" in out
    assert (exp / "results.csv").read_text(encoding="utf-8") == before

    # analysis
    run(ws, *ANALYZE)
    summary_text = (exp / "summary.csv").read_text(encoding="utf-8")
    summary = rows(exp / "summary.csv")
    assert list(summary[0]) == ["condition", "metric", "n", "mean", "std", "ci95_low", "ci95_high"]
    assert len(summary) == 6 * 3
    assert {r["condition"] for r in summary} == {
        f"lr={lr},warmup={w}" for lr in ("0.05", "0.2", "0.8") for w in (0, 50)
    }
    assert all(r["n"] == "3" for r in summary)
    analysis = (exp / "analysis.md").read_text(encoding="utf-8")
    assert DISCLAIMER in analysis and "## Conclusion" in analysis

    # figure
    run(ws, "paper/figures/make_figures.py")
    png = (ws / "paper/figures/figure1.png").read_bytes()
    assert png.startswith(PNG_MAGIC) and len(png) > 10_000
    assert "## Figure 1" in (ws / "paper/figures/captions.md").read_text(encoding="utf-8")

    # paper and review
    run(ws, "paper/build_paper.py", GOAL)
    paper = (ws / "paper/paper.tex").read_text(encoding="utf-8")
    assert DISCLAIMER in paper and GOAL.replace("|", "$|$") in paper
    assert "\\includegraphics[width=0.85\\linewidth]{figures/figure1.png}" in paper
    finals = {r["condition"]: float(r["mean"]) for r in summary if r["metric"] == "final_loss"}
    best = min((c for c in finals if math.isfinite(finals[c])), key=finals.get)
    assert f"{best} & final\\_loss & 3 & {finals[best]:.4g} &" in paper
    run(ws, "paper/check_paper.py")
    review = (ws / "paper/review.md").read_text(encoding="utf-8")
    assert "**Verdict: all checks passed.**" in review and "FAILED" not in review
    assert "## Decision brief" in review

    # the experiment gate's brief reports real numbers from the summary
    brief = briefs.experiment_brief_md(summary_text)
    assert DISCLAIMER in brief
    assert f"{finals[best]:.4g}" in brief and best in brief

    # a corrupted number in the paper is caught, and the script still exits 0
    lines = paper.splitlines()
    target = next(i for i, line in enumerate(lines) if line.startswith(f"{best} & final\\_loss &"))
    cells = lines[target].split("&")
    cells[3] = " 9.999 "
    lines[target] = "&".join(cells)
    (ws / "paper/paper.tex").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run(ws, "paper/check_paper.py")
    review = (ws / "paper/review.md").read_text(encoding="utf-8")
    assert "all checks passed" not in review
    assert "FAILED" in review and "mismatch" in review and "9.999" in review


@pytest.mark.slow
def test_the_paper_builds_to_a_pdf_with_its_figure_references_and_numbers(
    tmp_path: Path, needs_tex: None
):
    ws = tmp_path / "ws"
    ws.mkdir()
    write_scripts(ws)
    hub = Literature(ws, OFFLINE_LIBRARY)  # the survey's citations, as the cite tool writes them
    for query in ("warmup large minibatch", "variance adaptive learning rate", "transformer"):
        hub.cite(hub.search(query, sources=["library"])["results"][0]["id"])
    run(ws, SCRIPTS[0])
    run(ws, *ANALYZE)
    run(ws, "paper/figures/make_figures.py")
    run(ws, "paper/build_paper.py", GOAL)
    policy = ShellPolicy(sandbox=bwrap.problem() is None)
    shell = WorkerShell.of(ws, "writer", threading.Event(), policy)
    message = build_pdf(ws, "paper/paper.tex", shell)
    assert re.fullmatch(r"built paper/paper\.pdf: \d+ pages, \d+ KB, \d+\.\d s", message), message

    pdf = ws / "paper" / "paper.pdf"
    info = subprocess.run(["pdfinfo", pdf], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    assert pages >= 2 and f"{pages} pages" in message
    text = subprocess.run(["pdftotext", pdf, "-"], capture_output=True, text=True).stdout
    assert "References" in text and "Goyal" in text  # BibTeX typeset the cited entries
    images = subprocess.run(["pdfimages", "-list", pdf], capture_output=True, text=True).stdout
    assert len(images.strip().splitlines()) >= 3, images  # the header, a rule, figure 1
    summary = rows(ws / "experiment" / "summary.csv")
    best = min(
        (r for r in summary if r["metric"] == "final_loss" and math.isfinite(float(r["mean"]))),
        key=lambda r: float(r["mean"]),
    )
    flat = " ".join(text.split())
    for column in ("mean", "ci95_low", "ci95_high"):
        assert f"{float(best[column]):.4g}" in flat, column


@pytest.mark.slow
def test_writers_at_once_each_keep_their_rows_and_leave_no_lock_file(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    write_scripts(ws)
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    ids = [f"r{i:02d}" for i in range(1, 7)]
    script = [sys.executable, "experiment/run_experiment.py", "--run"]
    writers = [
        subprocess.Popen([*script, rid], cwd=ws, env=env, stdout=subprocess.DEVNULL) for rid in ids
    ]
    assert [writer.wait(timeout=120) for writer in writers] == [0] * len(ids)
    assert {r["run_id"] for r in rows(ws / "experiment" / "results.csv")} == set(ids)
    log = (ws / "experiment" / "log.md").read_text(encoding="utf-8")
    assert len([line for line in log.splitlines() if line.startswith("- ")]) == len(ids)
    assert sorted(p.name for p in (ws / "experiment").iterdir() if p.name.startswith(".")) == []


def test_probe_scripts_run_fast_and_write_their_results(tmp_path: Path):
    ws = tmp_path / "ws"
    probe_dir = ws / "idea" / "probes"
    probe_dir.mkdir(parents=True)
    (probe_dir / "plan.md").write_text(
        probes.probe_plan_md(list(PROBE_CANDIDATES)), encoding="utf-8"
    )
    texts = [(probe_dir / "plan.md").read_text(encoding="utf-8")]
    for cid in PROBE_CANDIDATES:
        write_into(ws, script_files(probe_path(cid), PROBE))
        t0 = time.perf_counter()
        out = run(ws, f"idea/probes/{cid}.py", cid).stdout
        assert time.perf_counter() - t0 < 10
        seconds = float(re.search(r"; (\d+\.\d+) s$", out.splitlines()[-2]).group(1))
        assert seconds < 1.0
        md = (probe_dir / f"{cid}.md").read_text(encoding="utf-8")
        assert md.startswith(f"# Probe result: {cid}")
        assert DISCLAIMER in md
        assert re.search(r"^- \*\*Verdict:\*\* (supports|against|inconclusive) — ", md, re.M)
        number = re.search(r"best_loss=([0-9.e+-]+)", out).group(1)
        assert number in md  # the printed, measured number is the one in the file
        texts.insert(0, md)
    merged = probes.probe_summary_md("\n".join(texts))
    assert DISCLAIMER in merged
    for cid in PROBE_CANDIDATES:
        assert f"- `{cid}`: done" in merged
        assert f"### Probe result: {cid}" in merged
    # summarising again with the summary among the files gives the same text
    assert probes.probe_summary_md("\n".join([*texts, merged])) == merged
    assert "`c1-linear-warmup`: missing" in probes.probe_summary_md("")
    with pytest.raises(ValueError):
        probe_path("../evil")
    refused = run(ws, "idea/probes/c1-linear-warmup.py", "../evil", ok=False)
    assert refused.returncode == 2 and "lowercase letters" in refused.stderr
    # the scripts' own modules leave nothing behind in the workspace
    assert not list(ws.rglob("__pycache__"))


def test_builders_state_the_disclaimer_and_what_they_were_given():
    budget = "small: a few seconds per batch"
    texts = {
        "survey": idea.survey_md(GOAL),
        "candidates": idea.candidates_md(GOAL, budget),
        "evaluation": idea.evaluation_md(),
        "probe plan": probes.probe_plan_md(["c1-linear-warmup", "c2-lr-sweep"]),
        "probe summary": probes.probe_summary_md(""),
        "idea brief": briefs.idea_brief_md(GOAL),
        "plan": plans.experiment_plan_md(2),
        "experiment brief": briefs.experiment_brief_md(""),
        "outline": plans.paper_outline_md(GOAL),
    }
    for name, text in texts.items():
        assert isinstance(text, str) and len(text) > 300, name
        assert DISCLAIMER in text, name
    for name in ("survey", "candidates", "idea brief", "outline"):
        assert GOAL in texts[name], name
    assert budget in texts["candidates"]
    for cid in CANDIDATES:
        assert f"## {cid} — " in texts["candidates"]
    assert "idea.probe_batch" in texts["evaluation"]
    assert "| c1-linear-warmup |" in texts["evaluation"].split("## Probe request")[1]
    assert "| c2-lr-sweep |" in texts["evaluation"].split("## Probe request")[1]
    for section in (
        "## Proposal",
        "## Evidence",
        "## Risks",
        "## What approval commits to",
        "## If rejected",
        "Success criterion",
    ):
        assert section in texts["idea brief"]
    plan = texts["plan"]
    assert all(f"| r{i:02d} |" in plan for i in range(1, N_RUNS + 1))
    assert "--batch 1 --batches 2" in plan and "--batch 2 --batches 2" in plan
    assert "could not be read" in texts["experiment brief"]
    assert STUDY_QUESTION in DISCLAIMER
