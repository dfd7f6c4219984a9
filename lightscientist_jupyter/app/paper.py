"""The paper and its PDF as the front doors show them (`show paper`, the side panel).

Which file is the paper's source (`paper/paper.tex`, or the Markdown a table names), whether
`paper/paper.pdf` was built and how many pages it has, and its pages as PNG images for a
notebook. Every file is read through `beneath.Beneath` (no link, nothing outside the
workspace): poppler's `pdfinfo` and `pdftoppm` are given the PDF's bytes on their standard
input, never a path a link could redirect, and the pages are drawn into a temporary folder
outside the workspace. Plain data only: the shells draw it. The reviews are `app.reviews`.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from lightscientist_jupyter.app.commands import require_project
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller import StageTable, load_table
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.workspace import Workspace

PDF_FILE = "paper/paper.pdf"
SOURCES = ("paper/paper.tex", "paper/paper.md")
"""Where the paper's source is when the table names none (LaTeX first: one source of truth,
and a table that writes LaTeX may keep an older Markdown draft beside it)."""
SOURCE_SUFFIXES = (".tex", ".md")
PDF_MAX = 200 * 1024 * 1024
"""The largest PDF read (a larger one is named, not read)."""
PAGES_SHOWN = 30
"""The most pages drawn inline (the header says how many there are)."""
DPI = 100
"""Pages drawn at 100 dpi: an A4 or letter page is about 850 pixels wide, readable in a
notebook's output area without scrolling sideways, and a 10-page paper stays under 2 MB."""
POPPLER_SECONDS = 60
_PAGES = re.compile(rb"^Pages:\s+(\d+)\s*$", re.MULTILINE)


class PaperUnavailable(LightScientistError):
    """What is asked of the paper cannot be given (no PDF, an unreadable one, no poppler)."""


@dataclasses.dataclass(frozen=True)
class Paper:
    """The paper's files in one workspace, as found now."""

    root: Path
    source: str
    """The source, workspace-relative (`paper/paper.tex`), written or not."""
    written: bool
    """Whether `source` is a file (reached through no link)."""
    pdf: str | None
    """`paper/paper.pdf` when it was built, else None."""
    pages: int | None
    """The PDF's page count; None without a PDF, or when poppler cannot read it."""
    problem: str | None = None
    """Why the PDF cannot be shown (damaged, a link, no poppler), in one line."""

    @property
    def pdf_path(self) -> Path | None:
        """The PDF's absolute path (for the command line's `--pdf`), None without one."""
        return None if self.pdf is None else self.root / self.pdf

    def header(self) -> str:
        """One line naming what is shown: the PDF and its pages, or why no PDF is."""
        source = f"; its source is {self.source}" if self.written else ""
        if self.problem is not None:
            return f"The PDF cannot be shown: {self.problem}{source}."
        if self.pdf is None or self.pages is None:
            return f"No PDF was built ({PDF_FILE} does not exist){source}."
        shown = f", the first {PAGES_SHOWN} shown" if self.pages > PAGES_SHOWN else ""
        return f"{self.pdf_path} — {self.pages} page{'s' if self.pages != 1 else ''}{shown}"


def source_of(files: Beneath, table: StageTable | None) -> str:
    """The paper's source: of the table's outputs named `paper.tex` or `paper.md` (LaTeX
    first), then the `.tex`/`.md` outputs of its `paper` stages (the last first), then
    `SOURCES`, the first where anything stands; none: the first of them (the name a
    missing paper is reported by)."""
    stages = list(table) if table is not None else []
    outputs = [o for s in stages for o in s.outputs]
    named = [
        o for name in ("paper.tex", "paper.md") for o in outputs if PurePosixPath(o).name == name
    ]
    papers = [
        o
        for s in reversed(stages)
        if s.phase == "paper"
        for o in reversed(s.outputs)
        if PurePosixPath(o).suffix in SOURCE_SUFFIXES
    ]
    candidates = [*named, *papers, *SOURCES]
    return next((rel for rel in candidates if _something_at(files, rel)), candidates[0])


def _something_at(files: Beneath, rel: str) -> bool:
    """Whether anything stands at `rel`: a link planted in the paper's place is the paper
    (shown as refused), never passed over for another file."""
    try:
        return files.lstat(rel) is not None
    except OSError:  # a link on the way
        return True


def read_paper(files: Beneath, table: StageTable | None = None) -> Paper:
    """The paper's source, its PDF and the PDF's page count (never raises for a damaged or
    refused PDF: `problem` says what is wrong)."""
    source = source_of(files, table)
    written = files.is_file(source)
    try:
        built = files.file_stat(PDF_FILE) is not None
    except OSError as exc:  # a link or a folder planted where the PDF goes
        return Paper(files.root, source, written, None, None, str(exc))
    if not built:
        return Paper(files.root, source, written, None, None)
    try:
        pages = page_count(files, PDF_FILE)
    except PaperUnavailable as exc:  # damaged, too large, no poppler
        return Paper(files.root, source, written, PDF_FILE, None, str(exc))
    return Paper(files.root, source, written, PDF_FILE, pages)


def paper_of(ws: Workspace) -> Paper:
    """The paper of the project at `ws` (`BadInput` when there is no project); a stage table
    that cannot be read leaves the default places (`SOURCES`)."""
    state = require_project(ws)
    try:
        table: StageTable | None = load_table(state.stages_file)
    except (OSError, LightScientistError):
        table = None
    return read_paper(Beneath(ws.root), table)


def _pdf_bytes(files: Beneath, rel: str) -> bytes:
    try:
        st = files.file_stat(rel)
        if st is None:
            raise PaperUnavailable(f"{files.path(rel)} does not exist")
        if st.st_size > PDF_MAX:
            raise PaperUnavailable(
                f"{files.path(rel)} is {st.st_size:,} bytes, more than the {PDF_MAX:,} read here"
            )
        return files.read_bytes(rel)
    except OSError as exc:  # a link (PathRefused), unreadable
        raise PaperUnavailable(str(exc)) from None


def _poppler(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise PaperUnavailable(
            f"{tool} is not installed (poppler-utils: apt-get install poppler-utils)"
        )
    return found


def _run(tool: str, args: Iterable[str], data: bytes, rel: str, cwd: str | None = None) -> bytes:
    """Run poppler's `tool` on the PDF's bytes (standard input); its first error line on
    failure, naming the file."""
    try:
        done = subprocess.run(
            [_poppler(tool), *args],
            input=data,
            capture_output=True,
            timeout=POPPLER_SECONDS,
            cwd=cwd,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise PaperUnavailable(f"{tool} took more than {POPPLER_SECONDS} s on {rel}") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[0] if said else f"exit status {done.returncode}"
        raise PaperUnavailable(f"{rel} cannot be read as a PDF ({tool}: {why})")
    return done.stdout


_counted: dict[tuple[str, int, int, int], int] = {}
"""Page counts by (path, inode, size, mtime): the side panel asks at every refresh."""


def page_count(files: Beneath, rel: str) -> int:
    """The PDF's number of pages (`pdfinfo`), or PaperUnavailable saying why not."""
    try:
        st = files.file_stat(rel)
    except OSError as exc:
        raise PaperUnavailable(str(exc)) from None
    if st is None:
        raise PaperUnavailable(f"{files.path(rel)} does not exist")
    key = (str(files.path(rel)), st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _counted:
        info = _run("pdfinfo", ["-"], _pdf_bytes(files, rel), rel)
        found = _PAGES.search(info)
        if found is None:
            raise PaperUnavailable(f"{rel} cannot be read as a PDF (pdfinfo names no pages)")
        if len(_counted) > 256:
            _counted.clear()
        _counted[key] = int(found.group(1))
    return _counted[key]


def page_images(
    files: Beneath, rel: str = PDF_FILE, *, dpi: int = DPI, last: int = PAGES_SHOWN
) -> list[bytes]:
    """The PDF's pages 1…`last` as PNG images (`pdftoppm`), drawn in a temporary folder
    outside the workspace and removed after."""
    data = _pdf_bytes(files, rel)
    with tempfile.TemporaryDirectory(prefix="lightscientist-pages-") as folder:
        args = ["-png", "-r", str(dpi), "-f", "1", "-l", str(last), "-", "page"]
        _run("pdftoppm", args, data, rel, cwd=folder)
        # pdftoppm pads the page numbers to the width of the last one: sort by number
        drawn = sorted(Path(folder).glob("page-*.png"), key=lambda p: int(p.stem.split("-")[1]))
        return [p.read_bytes() for p in drawn]
