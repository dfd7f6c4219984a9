"""The workers' `build_pdf` tool (runtime/latex_tools.py): real latexmk in the worker's
bubblewrap sandbox; what a worker reads is the tool's one message."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from support.chat_server import answer, tool_call
from support.runtime import finish

from lightscientist_jupyter.runtime.latex_tools import build_pdf
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkerShell
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.runtime.types import WorkerSpec
from lightscientist_jupyter.workspace import Workspace

GOOD = r"""\documentclass{article}
\begin{document}
\section{Warmup}
A learning rate of 0.1 was used \cite{goyal2017}.
\bibliographystyle{plain}
\bibliography{references}
\end{document}
"""
BIB = """@misc{goyal2017,
  title = {Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour},
  author = {Priya Goyal and Piotr Doll\\'ar},
  year = {2017}
}
"""
BROKEN = GOOD.replace("A learning rate", r"\frobnicate A learning rate")

pytestmark = pytest.mark.usefixtures("needs_tex", "needs_bwrap")


def sandboxed(ws: Workspace) -> WorkerShell:
    return WorkerShell.of(ws.root, "w-tex", threading.Event(), ShellPolicy(sandbox=True))


def write_paper(ws: Workspace, tex: str) -> None:
    (ws.root / "paper").mkdir(exist_ok=True)
    (ws.root / "paper" / "paper.tex").write_text(tex)
    (ws.root / "paper" / "references.bib").write_text(BIB)


def test_a_good_source_becomes_the_pdf_beside_it_and_nothing_else_lands_there(ws):
    write_paper(ws, GOOD)
    message = build_pdf(ws.root, "paper/paper.tex", sandboxed(ws))
    assert re.fullmatch(r"built paper/paper\.pdf: 1 pages, \d+ KB, \d+\.\d s", message), message
    pdf = ws.root / "paper" / "paper.pdf"
    assert pdf.read_bytes().startswith(b"%PDF")
    # the aux, log and bbl files are in the worker's home, not beside the source
    assert sorted(p.name for p in (ws.root / "paper").iterdir()) == [
        "paper.pdf",
        "paper.tex",
        "references.bib",
    ]


def test_an_error_is_named_by_its_file_line_and_text(ws):
    write_paper(ws, BROKEN)
    message = build_pdf(ws.root, "/paper/paper.tex", sandboxed(ws))
    first = message.splitlines()[0]
    assert first == (
        r"paper/paper.tex:4: Undefined control sequence \frobnicate "
        r'(line 4: "\frobnicate A learning rate of 0.1 was used \cite{goyal2017}.")'
    )
    assert message.splitlines()[-1] == "no PDF built: fix paper/paper.tex and build again"
    assert not (ws.root / "paper" / "paper.pdf").exists()


def test_a_citation_missing_from_the_bib_file_is_named(ws):
    write_paper(ws, GOOD.replace(r"\cite{goyal2017}", r"\cite{nobody2020}"))
    lines = build_pdf(ws.root, "paper/paper.tex", sandboxed(ws)).splitlines()
    assert lines[0].startswith("built paper/paper.pdf: 1 pages")
    assert lines[1] == (
        "paper/paper.tex:4: citation 'nobody2020' is undefined "
        "(cite only keys the cite tool wrote to the .bib file)"
    )


def test_without_a_toolchain_one_line_says_so_and_the_source_stays(ws, monkeypatch, tmp_path):
    write_paper(ws, GOOD)
    monkeypatch.setenv("PATH", str(tmp_path / "no-tex-here"))
    message = build_pdf(ws.root, "paper/paper.tex", sandboxed(ws))
    assert message == (
        "no TeX engine here (latexmk and pdflatex not found; scripts/setup installs them): "
        "paper/paper.tex is kept, no PDF built"
    )
    assert (ws.root / "paper" / "paper.tex").read_text() == GOOD


def test_a_source_outside_the_workspace_or_through_a_link_is_refused(ws, tmp_path):
    outside = tmp_path / "outside.tex"
    outside.write_text(GOOD)
    (ws.root / "linked.tex").symlink_to(outside)
    shell = sandboxed(ws)
    assert build_pdf(ws.root, "../outside.tex", shell).startswith(
        "build_pdf refused ../outside.tex: ../outside.tex leaves the workspace"
    )
    assert build_pdf(ws.root, "linked.tex", shell) == (
        "build_pdf refused linked.tex: it is a link or not a regular file"
    )
    assert build_pdf(ws.root, "paper/none.tex", shell) == (
        "paper/none.tex does not exist: write the LaTeX source first"
    )
    assert not list(Path(ws.root).glob("*.pdf"))


def fix_the_paper(body: dict) -> dict:
    """A worker that writes a paper with an error, builds it, edits the line the build named
    and builds again, then completes."""
    results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    if not results:
        return tool_call("write_file", file_path="/paper/paper.tex", content=BROKEN)
    if len(results) == 1:
        return tool_call("write_file", file_path="/paper/references.bib", content=BIB)
    if len(results) in (2, 4):
        return tool_call("build_pdf", source="paper/paper.tex")
    if len(results) == 3:
        named = re.match(r"paper/paper\.tex:(\d+): Undefined control sequence (\\\w+)", results[2])
        assert named is not None, results[2]
        return tool_call(
            "edit_file",
            file_path="/paper/paper.tex",
            old_string=named.group(2) + " ",
            new_string="",
        )
    if len(results) == 5:
        return tool_call(
            "complete_stage", summary="paper built", outputs=["paper/paper.pdf"], next_stage=""
        )
    return answer("done")


def test_a_worker_fixes_the_line_the_build_names(chat_server, chat_model, make_runtime, ws):
    chat_server.answer_with(fix_the_paper)
    runtime = make_runtime(chat_model, retries=0, shell_policy=ShellPolicy(sandbox=True))
    worker = runtime.start(WorkerSpec(message="Write the paper.", stage="paper.write"))
    record = finish(runtime, worker, timeout=120)
    assert record["status"] == "completed", record
    tool_results = [
        m["content"] for m in chat_server.requests[-1]["messages"] if m["role"] == "tool"
    ]
    assert tool_results[2].startswith(r"paper/paper.tex:4: Undefined control sequence \frobnicate")
    assert tool_results[4].startswith("built paper/paper.pdf: 1 pages")
    assert (ws.root / "paper" / "paper.pdf").read_bytes().startswith(b"%PDF")
    assert r"\frobnicate" not in (ws.root / "paper" / "paper.tex").read_text()
