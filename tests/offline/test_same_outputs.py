"""An offline auto run leaves the same files with the same numbers as before the study became
real script files: the list of outputs and experiment/summary.csv are compared with golden
copies taken from a run of the earlier code (plus the two modules now copied beside each
script)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"
GOAL = "Does learning-rate warmup help a small MLP train?"


def outputs(root: Path) -> list[str]:
    """Every file of the workspace outside LightScientist's own `.lightscientist/`."""
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and ".lightscientist" not in p.relative_to(root).parts
    )


@pytest.mark.slow
def test_an_offline_auto_run_leaves_the_golden_files_and_numbers(tmp_path: Path):
    ws = tmp_path / "ws"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LIGHTSCIENTIST_", "OPENAI_"))}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lightscientist_jupyter",
            "research",
            GOAL,
            "--workspace",
            str(ws),
            "--mode",
            "auto",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr

    assert outputs(ws) == (GOLDEN / "files.txt").read_text(encoding="utf-8").split()
    summary = (ws / "experiment" / "summary.csv").read_text(encoding="utf-8")
    assert summary == (GOLDEN / "summary.csv").read_text(encoding="utf-8")
    # the paper's table is the summary formatted, and the review found nothing wrong
    paper = (ws / "paper" / "paper.md").read_text(encoding="utf-8")
    assert "| lr=0.2,warmup=0 | final_loss | 3 | 0.02128 | 0.004432 | 0.01027 | 0.03229 |" in paper
    assert "**Verdict: all checks passed.**" in (ws / "paper" / "review.md").read_text()
    # the survey searched the shipped library and the paper cites what it found
    assert "no literature access" not in (ws / "idea" / "survey.md").read_text().lower()
    references = paper.split("## References", 1)[1]
    assert references.count("\n- [@") >= 3
    check = _cli(tmp_path, env, "check", "paper/paper.md", "--workspace", str(ws))
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count(" from library (retrieved ") >= 3
    assert check.stdout.rstrip().endswith("all resolved")
    # a citation nobody returned and a number no result file holds are each named
    (ws / "paper" / "paper.md").write_text(
        paper.replace("## Limitations", "We cite [@nobody2099] and a loss of 0.98765.\n\n"
                      "## Limitations"), encoding="utf-8"
    )  # fmt: skip
    bad = _cli(tmp_path, env, "check", "--workspace", str(ws))
    assert bad.returncode == 1
    assert "NO  [@nobody2099]" in bad.stdout and "not in paper/references.bib" in bad.stdout
    assert "NO  0.98765" in bad.stdout and "in no result file under experiment" in bad.stdout


def _cli(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
