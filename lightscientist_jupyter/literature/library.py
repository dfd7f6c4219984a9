"""The local library: BibTeX or CSL-JSON files, or a folder of them, searched offline.

Its path comes from `[literature] library` in the stage table, `--library`, or
`LIGHTSCIENTIST_LIBRARY` (several paths separated by the system's path separator).
"""

from __future__ import annotations

from pathlib import Path

from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.errors import LiteratureError
from lightscientist_jupyter.literature.bibtex import read_library_file
from lightscientist_jupyter.literature.records import Paper, normalise_title
from lightscientist_jupyter.literature.sources import in_years

SUFFIXES = (".bib", ".json")


def library_files(paths: list[Path], root: Path | None = None) -> list[Path]:
    """The .bib and .json files the paths name (folders searched recursively); those in the
    workspace `root` reached through no link (see `_in_workspace`)."""
    files: list[Path] = []
    for path in paths:
        if root is not None and (path == root or root in path.parents):
            files += _in_workspace(Beneath(root), path)
        elif path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES)
        elif path.is_file():
            files.append(path)
        else:
            raise LiteratureError(f"library {path} does not exist (a .bib, .json or a folder)")
    return files


def _in_workspace(files: Beneath, path: Path) -> list[Path]:
    """A library in the workspace: a command may have planted links there, which are
    neither followed nor listed (a link named as the library is refused)."""
    try:
        if files.is_dir(path):
            return [
                files.root / rel for rel in files.walk_files(path) if rel.suffix.lower() in SUFFIXES
            ]
        if files.lstat(path) is None:
            raise LiteratureError(f"library {path} does not exist (a .bib, .json or a folder)")
    except PathRefused as exc:
        raise LiteratureError(f"library {exc}") from None
    return [path]  # read through no link by `read_library_file`


class Library:
    """Every record of the library's files, read once (`root`: the workspace, whose files
    are read through no link)."""

    name = "library"

    def __init__(self, paths: list[Path], root: Path | None = None):
        self.paths = paths
        self.records: list[tuple[Paper, Path]] = [
            (paper, file)
            for file in library_files(paths, root)
            for paper in read_library_file(file, root)
        ]

    def search(
        self, query: str, limit: int, year_from: int | None, year_to: int | None
    ) -> list[Paper]:
        """Records whose title, authors or venue share words with `query`, best first."""
        words = {w for w in normalise_title(query).split() if len(w) > 2}
        scored = []
        for i, (paper, _) in enumerate(self.records):
            text = normalise_title(" ".join([paper.title, *paper.authors, paper.venue]))
            have = set(text.split())
            stems = {w[:5] for w in have}
            score = sum(2 if w in have else 1 for w in words if w in have or w[:5] in stems)
            if score and in_years(paper, year_from, year_to):
                scored.append((-score, i, paper))
        return [p for _, _, p in sorted(scored)[:limit]]

    def get(self, ident: str) -> Paper | None:
        return next((p for p, _ in self.records if p.matches(ident)), None)

    def file_of(self, paper: Paper) -> Path | None:
        return next((f for p, f in self.records if p.keys() & paper.keys()), None)
