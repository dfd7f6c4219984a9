"""A Markdown file shown inline reads as a paper does: its Pandoc citations numbered, the
works they name listed at its end (from the project's `references.bib`)."""

from __future__ import annotations

from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.jupyter.show import load

BIB = """@inproceedings{gotmare2019closer,
  title = {A Closer Look at Deep Learning Heuristics},
  author = {Akhilesh Gotmare and Nitish Shirish Keskar and Caiming Xiong and Richard Socher},
  booktitle = {ICLR},
  year = {2019},
  doi = {10.48550/arxiv.1810.13243}
}
@article{ma2021adequacy, title = {On the Adequacy of Untuned Warmup}, author = {Jerry Ma and
  Denis Yarats}, journal = {AAAI}, year = 2021}
"""


def _shown(parts) -> str:
    return "".join(part.data for part in parts if isinstance(getattr(part, "data", None), str))


def test_citations_are_numbered_and_listed_from_the_papers_references(tmp_path):
    (tmp_path / "paper").mkdir()
    (tmp_path / "idea").mkdir()
    (tmp_path / "paper" / "references.bib").write_text(BIB, encoding="utf-8")
    (tmp_path / "idea" / "survey.md").write_text(
        "Warmup helps [@gotmare2019closer]; untuned warmup too [@ma2021adequacy; "
        "@gotmare2019closer]. A guess [@nobody2030].\n",
        encoding="utf-8",
    )
    shown = _shown(load(Beneath(tmp_path), "idea/survey.md"))
    assert "Warmup helps [1]; untuned warmup too [2, 1]." in shown
    assert "[@gotmare2019closer]" not in shown
    assert "[@nobody2030] *(not in the references)*" in shown  # never passed off as a work
    references = shown.split("### References")[1]
    assert "1. Akhilesh Gotmare, Nitish Shirish Keskar, Caiming Xiong et al. (2019). " in (
        references
    )
    assert "*A Closer Look at Deep Learning Heuristics*. ICLR." in references
    assert "https://doi.org/10.48550/arxiv.1810.13243" in references
    assert "2. Jerry Ma, Denis Yarats (2021). *On the Adequacy of Untuned Warmup*. AAAI." in (
        references
    )


def test_without_references_the_text_is_shown_as_written(tmp_path):
    (tmp_path / "notes.md").write_text("As argued [@someone2020].\n", encoding="utf-8")
    shown = _shown(load(Beneath(tmp_path), "notes.md"))
    assert "[@someone2020] *(not in the references)*" in shown
    assert "### References" not in shown
