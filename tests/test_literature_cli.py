"""The literature at the front doors: `--library`, the offline survey citing it, `check`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lightscientist_jupyter.controller.loader import default_table_path

MINE = """@article{smith2019warm,
  title = {Learning Rate Warmup in Practice},
  author = {Smith, Ada and Jones, Bo},
  journal = {Journal of Examples},
  year = {2019},
  doi = {10.5555/example.2019}
}
"""


def run(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("LIGHTSCIENTIST_", "OPENAI_"))}
    kept["LIGHTSCIENTIST_MEMORY"] = os.environ["LIGHTSCIENTIST_MEMORY"]  # the suite's
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args],
        cwd=cwd, env=kept | env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_missing_library_is_one_line_before_anything_is_written(tmp_path):
    proc = run(tmp_path, "research", "goal", "--workspace", "ws", "--library", "nope.bib")
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        .splitlines()[-1]
        .endswith("--library nope.bib does not exist (a .bib, .json or a folder)")
    )
    assert not (tmp_path / "ws" / ".lightscientist").exists()


@pytest.mark.parametrize(
    "variable, value, why",
    [
        ("LIGHTSCIENTIST_LITERATURE_DEADLINE", "soon", "'soon' is not a number of seconds above "
         "0 (e.g. 30)"),
        ("LIGHTSCIENTIST_LITERATURE_MAX_BYTES", "16M", "'16M' is not a whole number of bytes, at "
         "least 1024 (e.g. 16_000_000)"),
    ],
)  # fmt: skip
def test_a_bad_literature_bound_in_the_environment_is_one_line(tmp_path, variable, value, why):
    proc = run(tmp_path, "research", "goal", "--workspace", "ws", **{variable: value})
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"lightscientist research: error: {variable}={value!r}: {why}"
    ]
    assert not (tmp_path / "ws" / ".lightscientist").exists()


@pytest.mark.slow
def test_the_offline_survey_searches_and_cites_the_library_given(tmp_path):
    skills = default_table_path().parent / "skills"
    (tmp_path / "survey.toml").write_text(
        f'start = "idea.survey"\n\n[stages."idea.survey"]\nskill = "{skills}/idea.survey.md"\n'
        'outputs = ["idea/survey.md"]\nnext = "done"\nallowed = ["done"]\n',
        encoding="utf-8",
    )
    (tmp_path / "mine.bib").write_text(MINE, encoding="utf-8")
    proc = run(tmp_path, "research", "Does warmup help?", "--workspace", "ws", "--mode", "auto",
               "--stages", "survey.toml", "--library", "mine.bib")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ws = tmp_path / "ws"
    survey = (ws / "idea" / "survey.md").read_text(encoding="utf-8")
    assert '- Smith and Jones (2019), "Learning Rate Warmup in Practice", Journal of Examples ' \
        "[@smith2019learning]" in survey  # fmt: skip
    bib = (ws / "paper" / "references.bib").read_text(encoding="utf-8")
    assert bib.startswith("@article{smith2019learning,") and "doi = {10.5555/example.2019}" in bib
    assert "Goyal" not in bib  # the shipped library is only the offline default

    (ws / "paper" / "paper.md").write_text("# P\n\nWarmup [@smith2019learning].\n")
    check = run(tmp_path, "check", "--workspace", "ws")
    assert check.returncode == 0, check.stdout
    assert "record 10.5555/example.2019 from library" in check.stdout

    from lightscientist_jupyter import api

    (ws / "paper" / "paper.md").write_text("# P\n\nWarmup [@smith2019learning], [@nobody2020].\n")
    report = api.check(ws)  # the same report, as a DataFrame
    assert list(report.columns) == ["check", "what", "trace", "ok", "notebook", "cell"]
    cited = report[report["check"] == "citations:paper/paper.md"].set_index("what")
    assert bool(cited.loc["[@smith2019learning] (line 3)", "ok"])
    assert "smith2019learning" in cited.loc["[@smith2019learning] (line 3)", "trace"]
    assert not bool(cited.loc["[@nobody2020] (line 3)", "ok"])
    lines = run(tmp_path, "check", "--workspace", "ws").stdout  # what the command prints
    for what, row in cited.iterrows():
        assert f"{'ok ' if row['ok'] else 'NO '} {what} -> {row['trace']}" in lines


def test_api_check_reads_a_folder_without_a_project_as_the_command_does(tmp_path):
    from lightscientist_jupyter import api

    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "paper.md").write_text("# P\n\nWarmup [@nobody2020].\n")
    report = api.check(tmp_path)
    assert not (tmp_path / ".lightscientist" / "state.json").exists()
    cited = report[report["check"] == "citations:paper/paper.md"]
    assert list(cited["what"]) == ["[@nobody2020] (line 3)"] and not cited["ok"].any()
    command = run(tmp_path, "check", "--workspace", str(tmp_path))
    assert command.returncode == 1 and "NO  [@nobody2020] (line 3)" in command.stdout
