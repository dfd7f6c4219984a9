"""The stage table's `checks`: validated by the loader, run by layer 1 when a stage finishes.

A citation nobody's tool returned or a number no result file holds refuses the finish with a
reason naming it; once the paper is fixed the same finish goes through.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lightscientist_jupyter.app import literature
from lightscientist_jupyter.controller import ResearchController, checks
from lightscientist_jupyter.controller.loader import load_table
from lightscientist_jupyter.errors import StageTableError
from lightscientist_jupyter.literature import Literature
from lightscientist_jupyter.literature.config import LiteratureConfig
from lightscientist_jupyter.literature.http import Bounds

LIBRARY = """@inproceedings{anything,
  title = {On the Variance of the Adaptive Learning Rate and Beyond},
  author = {Liu, Liyuan and Han, Jiawei},
  booktitle = {ICLR},
  year = {2020},
  eprint = {1908.03265},
  archiveprefix = {arXiv}
}
"""

TABLE = """start = "write"

[stages.write]
skill = "write.md"
outputs = ["paper/paper.md"]
next = "done"
allowed = ["done"]
checks = ["citations:paper/paper.md", "numbers:paper/paper.md:results"]
"""


@pytest.fixture
def project(tmp_path: Path, write_table, workspace):
    table = load_table(write_table(tmp_path / "table", TABLE))
    controller = ResearchController.create(workspace, "Does warmup help?", table=table)
    root = workspace.root
    (root / "results").mkdir()
    (root / "results" / "metrics.json").write_text(json.dumps({"loss": {"final": 0.04314}}))
    library = tmp_path / "library.bib"
    library.write_text(LIBRARY, encoding="utf-8")
    hub = Literature(root, library)
    found = hub.search("adaptive learning rate variance", sources=["library"])
    key, _ = hub.cite(found["results"][0]["id"])
    return controller, root, key


def write_paper(root: Path, text: str) -> None:
    (root / "paper").mkdir(exist_ok=True)
    (root / "paper" / "paper.md").write_text(text, encoding="utf-8")


def test_an_unresolved_citation_and_an_untraced_number_refuse_the_finish(project):
    controller, root, key = project
    write_paper(root, f"# P\n\nWarmup [@{key}; @nobody2099] ended at 0.0431 and 0.98765.\n")
    outcome = controller.finish_stage("done")
    assert not outcome.accepted and outcome.stage == "write"
    assert "the stage's checks failed" in outcome.message
    assert "citations: [@nobody2099] (line 3) not in paper/references.bib" in outcome.message
    assert "numbers: 0.98765 (line 3) in no result file under results" in outcome.message
    assert "0.0431" not in outcome.message  # traced to results/metrics.json, rounded
    assert key not in outcome.message

    write_paper(root, f"# P\n\nWarmup [@{key}] ended at 0.0431; 0.98765 (not measured).\n")
    assert controller.finish_stage("done").accepted
    assert controller.status == "done"


def test_an_entry_no_tool_returned_is_named(project):
    controller, root, _ = project
    with (root / "paper" / "references.bib").open("a", encoding="utf-8") as fh:
        fh.write("\n@misc{made2024up,\n  title = {A Paper Nobody Found},\n  year = {2024}\n}\n")
    write_paper(root, "# P\n\nAs shown before [@made2024up].\n")
    outcome = controller.finish_stage("done")
    assert not outcome.accepted
    assert (
        "citations: paper/references.bib: made2024up no literature tool returned this work"
        in outcome.message
    )


def test_the_report_traces_each_item(project):
    _, root, key = project
    write_paper(root, f"Loss 0.04314 [@{key}] and \\cite{{{key}}}.\n\n```\n9.999\n```\n")
    report = checks.report("numbers:paper/paper.md:results", root)
    assert [(i.what, i.trace) for i in report] == [
        ("0.04314 (line 1)", "results/metrics.json $.loss.final (0.04314)")
    ]
    cites = checks.report("citations:paper/paper.md", root)
    assert [i.ok for i in cites] == [True, True, True]
    assert cites[2].trace.startswith("record arXiv:1908.03265 from library (retrieved ")


def test_a_latex_paper_is_traced_as_a_markdown_one(project):
    _, root, key = project
    (root / "paper" / "paper.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n"
        f"Loss 0.04314 \\cite{{{key},nobody2099}}; 0.98765.\n"
        "\\includegraphics[width=0.8\\linewidth]{fig.png} 1.25 % not measured\n"
        "\\end{document}\n",
        encoding="utf-8",
    )
    numbers = checks.report("numbers:paper/paper.tex:results", root)
    assert [(i.what, i.trace) for i in numbers] == [
        ("0.04314 (line 3)", "results/metrics.json $.loss.final (0.04314)"),
        (
            "0.98765 (line 3)",
            "in no result file under results (mark it '% not measured' on its line if not "
            "measured)",
        ),
        ("1.25 (line 4)", "not measured"),
    ]
    cites = checks.report("citations:paper/paper.tex", root)
    assert [(i.what, i.ok) for i in cites[:2]] == [
        (f"[@{key}] (line 3)", True),
        ("[@nobody2099] (line 3)", False),
    ]


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("links:paper.md", "a check is one of citations:DOC, numbers:DOC"),
        ("numbers:../paper.md", "'../paper.md' must be a path inside the workspace"),
        ("citations:a.md:results", "citations takes one document"),
    ],
)
def test_a_bad_check_is_named_by_the_loader(tmp_path, write_table, spec, problem):
    text = TABLE.replace(
        'checks = ["citations:paper/paper.md", "numbers:paper/paper.md:results"]',
        f'checks = ["{spec}"]',
    )
    with pytest.raises(StageTableError) as err:
        load_table(write_table(tmp_path / "t", text))
    assert "stage 'write', key 'checks' (line 8)" in str(err.value)
    assert problem in str(err.value)


def test_the_literature_table_names_the_library_and_the_references(tmp_path, write_table):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "mine.bib").write_text(LIBRARY, encoding="utf-8")
    text = TABLE + '\n[literature]\nlibrary = "mine.bib"\nreferences = "refs/cited.bib"\n'
    table = load_table(write_table(tmp_path / "t", text))
    assert table.literature == {
        "library": [str((tmp_path / "t" / "mine.bib").resolve())],
        "references": "refs/cited.bib",
    }
    root = tmp_path / "ws"
    literature.configure(root, table)
    hub = Literature(root)
    found = hub.search("variance", sources=["library"])
    assert hub.cite(found["results"][0]["id"]) == ("liu2020variance", True)
    assert (root / "refs" / "cited.bib").read_text().startswith("@inproceedings{liu2020variance,")

    bad = TABLE + '\n[literature]\nlibrary = "none.bib"\nzotero = 1\n'
    with pytest.raises(StageTableError) as err:
        load_table(write_table(tmp_path / "u", bad))
    assert (
        "table [literature]: unknown key 'zotero'; expected library, references, deadline, "
        "max_bytes" in str(err.value)
    )
    assert f"key 'library': {(tmp_path / 'u' / 'none.bib').resolve()} does not exist" in str(
        err.value
    )


def test_the_literature_table_sets_the_bounds_of_each_request(tmp_path, write_table, monkeypatch):
    monkeypatch.delenv("LIGHTSCIENTIST_LITERATURE_DEADLINE", raising=False)
    monkeypatch.delenv("LIGHTSCIENTIST_LITERATURE_MAX_BYTES", raising=False)
    text = TABLE + "\n[literature]\ndeadline = 12.5\nmax_bytes = 2_000_000\n"
    table = load_table(write_table(tmp_path / "t", text))
    assert table.literature == {"library": [], "deadline": 12.5, "max_bytes": 2_000_000}
    root = tmp_path / "ws"
    literature.configure(root, table)
    assert LiteratureConfig.load(root).bounds == Bounds(deadline=12.5, max_bytes=2_000_000)
    monkeypatch.setenv("LIGHTSCIENTIST_LITERATURE_DEADLINE", "4")  # a machine's setting wins
    assert LiteratureConfig.load(root).bounds == Bounds(deadline=4.0, max_bytes=2_000_000)
    assert LiteratureConfig.load(tmp_path / "other").bounds == Bounds(deadline=4.0)

    bad = TABLE + '\n[literature]\ndeadline = "soon"\nmax_bytes = 10\n'
    with pytest.raises(StageTableError) as err:
        load_table(write_table(tmp_path / "u", bad))
    assert (
        "table [literature], key 'deadline': 'soon' is not a number of seconds above 0 (e.g. 30)"
        in str(err.value)
    )
    assert (
        "table [literature], key 'max_bytes': 10 is not a whole number of bytes, at least 1024 "
        "(e.g. 16_000_000)" in str(err.value)
    )
