"""Every document a module names is one the repository has: a reader sent to `DESIGN.md`
found nothing (issue 35). Upper-case `NAME.md` names are the repository's documents; the
one a workspace holds (`PROCESS.md`) is the project's memory, not a document of ours."""

from __future__ import annotations

import re
from pathlib import Path

from lightscientist_jupyter.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
DOC = re.compile(r"\b[A-Z][A-Z_]+\.md\b")
SOURCES = ("lightscientist_jupyter", "labextension/src", "tests", "scripts", "benchmarks")
SKIP = {"node_modules", "labextension", "golden"}
"""Built or third-party folders, and the recorded outputs of the offline scientist."""


def named_documents() -> dict[str, set[str]]:
    """Each upper-case `NAME.md` the sources name, with the files naming it."""
    found: dict[str, set[str]] = {}
    for top in SOURCES:
        for path in sorted((REPO / top).rglob("*")):
            rel = path.relative_to(REPO)
            if not path.is_file() or path.suffix not in (".py", ".ts", ".js", ".sh", ""):
                continue
            if SKIP & set(rel.parts[1:-1]) or path == Path(__file__):  # this file names them
                continue
            for name in DOC.findall(path.read_text(encoding="utf-8", errors="replace")):
                found.setdefault(name, set()).add(str(rel))
    return found


def test_every_document_a_module_names_is_in_the_repository():
    workspace_files = {Workspace(REPO / "nowhere").process_md.name}
    have = {p.name for p in REPO.rglob("*.md") if "node_modules" not in p.parts}
    named = named_documents()
    assert "README.md" in named or "CONTRIBUTING.md" in named, named  # the scan reads files
    missing = {n: sorted(by) for n, by in named.items() if n not in have | workspace_files}
    assert missing == {}
