"""`%lightscientist check`: the provenance report in a notebook, a UsageError naming a problem."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell


@pytest.fixture(scope="module")
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "lightscientist_jupyter")
    return shell


def test_check_prints_the_report_and_names_what_does_not_resolve(ip, tmp_path, capsys):
    (tmp_path / "experiment").mkdir()
    (tmp_path / "experiment" / "summary.csv").write_text("condition,mean\nlr=0.2,0.02128\n")
    (tmp_path / "paper").mkdir()
    paper = tmp_path / "paper" / "paper.md"
    paper.write_text("# P\n\nThe mean was 0.0213 at lr=0.2.\n", encoding="utf-8")
    ip.run_line_magic("lightscientist", f"check --workspace {tmp_path}")
    out = capsys.readouterr().out
    assert "ok  0.0213 (line 3) -> experiment/summary.csv row 2, column mean (0.02128)" in out
    assert out.rstrip().endswith("all resolved")

    paper.write_text("# P\n\nAs [@nobody2099] found, 0.5.\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"check: 2 unresolved: citations:paper/paper.md: "
                       r"\[@nobody2099\] \(line 3\) -> not in paper/references.bib"):  # fmt: skip
        ip.run_line_magic("lightscientist", f"check paper/paper.md --workspace {tmp_path}")
    assert "NO  0.5 (line 3) -> in no result file under experiment" in capsys.readouterr().out
