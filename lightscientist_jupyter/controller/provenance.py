"""Provenance of a document: each citation to a record, each decimal number to a result file.

`citations(doc, root)` and `numbers(doc, root, folders)` return `Item`s: what was found in the
document, where it traces to, or why it does not. Deterministic code over files only: layer 1
runs it when a stage with `checks` finishes, and `lightscientist check` prints it. A document
is Markdown, or LaTeX when its name ends `.tex` (its prose read by `latex_prose`).
"""

from __future__ import annotations

import bisect
import csv
import dataclasses
import io
import json
import re
import time
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import lexists, read_text
from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.controller.latex_prose import latex_lines, numbers_only
from lightscientist_jupyter.errors import LiteratureError
from lightscientist_jupyter.literature.bibtex import paper_of_fields, parse_bibtex
from lightscientist_jupyter.literature.cache import Cache
from lightscientist_jupyter.literature.config import LiteratureConfig, folder
from lightscientist_jupyter.literature.library import Library
from lightscientist_jupyter.values import notebook

NOT_MEASURED = "not measured"
RESULT_SUFFIXES = (".csv", ".tsv", ".json", notebook.SUFFIX)
"""Result files: tables, JSON, and executed notebooks (the texts their cells printed)."""

_PANDOC = re.compile(r"\[([^\[\]]*@[^\[\]]*)\]")
_PANDOC_KEY = re.compile(r"(?<![\w@])-?@([A-Za-z0-9_][\w:.#$%&+?<>~/-]*[A-Za-z0-9_])")
_LATEX = re.compile(r"\\cite[a-zA-Z]*\*?(?:\[[^\]]*\])*\{([^}]*)\}")
_NUMBER = re.compile(r"(?<![\w.])(\d+\.\d+(?:[eE][-+]?\d+)?)(?![\d]|\.\d)(%?)")
_SKIP_ANY = [
    re.compile(r"https?://\S+"),
    re.compile(r"\barXiv:\s*\S+", re.I),
    re.compile(r"\b10\.\d{4,9}/\S+"),
    _PANDOC,
    _LATEX,
]
"""What holds no measured number in any document: addresses, identifiers, citations."""
_SKIP = [
    re.compile(r"<!--.*?-->", re.S),
    re.compile(r"`[^`\n]*`"),
    re.compile(r"\]\([^)]*\)"),  # link and image targets
    *_SKIP_ANY,
]
"""What holds no measured number in Markdown."""


@dataclasses.dataclass(frozen=True)
class Item:
    what: str
    """The citation or number, with its line: `[@key] (line 3)`."""
    trace: str
    """Where it traces to, or what is wrong."""
    ok: bool
    notebook: str | None = None
    """The notebook (workspace path) whose cell printed the number, if one did."""
    cell: str | None = None
    """That cell's id."""

    def line(self) -> str:
        return f"{'ok ' if self.ok else 'NO '} {self.what} -> {self.trace}"


def _read(doc: Path) -> str:
    try:
        return read_text(doc)
    except FileNotFoundError:
        raise LiteratureError(f"{doc} does not exist") from None
    except PathRefused as exc:
        raise LiteratureError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LiteratureError(f"{doc} cannot be read as UTF-8 text ({exc})") from None


def _prose_lines(text: str, references: bool = False) -> list[tuple[int, str]]:
    """(line number, text) of Markdown prose and tables: no fenced code; the entries of a
    References section (its list items) only when `references`."""
    out, fenced, skip_level = [], False, 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        heading = re.match(r"^(#+)\s+(.*)", line)
        if heading and not fenced:
            level = len(heading.group(1))
            if skip_level and level <= skip_level:
                skip_level = 0
            if re.match(r"(references|bibliography)\b", heading.group(2).strip(), re.I):
                skip_level = level
        entry = skip_level and re.match(r"\s*([-*+]|\d+\.|\[)", line)
        if not fenced and (references or not entry):
            out.append((number, line))
    return out


# ---------------------------------------------------------------------- citations


def cited_keys(text: str, latex: bool = False) -> list[tuple[str, int]]:
    """Every citation key in the document (LaTeX when `latex`), with its line, in order."""
    found = []
    if latex:
        lines = [(number, line) for number, line, _ in latex_lines(text)]
    else:
        lines = [(n, re.sub(r"`[^`\n]*`", "", line)) for n, line in _prose_lines(text, True)]
    for number, line in lines:
        for group in _PANDOC.findall(line):
            found += [(k, number) for k in _PANDOC_KEY.findall(group)]
        for group in _LATEX.findall(line):
            found += [(k.strip(), number) for k in group.split(",") if k.strip()]
    return found


def citations(doc: Path, root: Path) -> list[Item]:
    """Each citation resolves to the references file; each entry there to a found record."""
    config = LiteratureConfig.load(root)
    refs = root / config.references
    items = []
    text = _read(doc)
    entries: dict[str, dict[str, str]] = {}
    if lexists(refs):
        entries = dict(parse_bibtex(_read(refs), str(refs)))
    shown = config.references
    for key, number in cited_keys(text, is_latex(doc)):
        if key in entries:
            items.append(Item(f"[@{key}] (line {number})", f"{shown}: {key}", True))
        else:
            items.append(Item(f"[@{key}] (line {number})", f"not in {shown}", False))
    cache = Cache(folder(root))
    library = Library(list(config.library)) if config.library else None
    for key, fields in entries.items():
        paper = paper_of_fields(fields, source="references")
        hit = cache.find(fields["lsrecord"]) if fields.get("lsrecord") else None
        hit = hit or cache.find_paper(paper)
        if hit is not None:
            record, line = hit
            when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(line.get("retrieved_at", 0)))
            where = f"record {record.id} from {line.get('source')} (retrieved {when} UTC)"
            items.append(Item(f"{shown}: {key}", where, True))
        elif library is not None and library.file_of(paper) is not None:
            items.append(Item(f"{shown}: {key}", f"library {library.file_of(paper)}", True))
        else:
            why = "no literature tool returned this work (cite only through `cite`)"
            items.append(Item(f"{shown}: {key}", why, False))
    return items


# ---------------------------------------------------------------------- numbers


@dataclasses.dataclass(frozen=True)
class Place:
    """Where a value is: the text a check names, and the notebook cell when a cell printed it."""

    text: str
    notebook: str | None = None
    cell: str | None = None


@dataclasses.dataclass
class _Values:
    values: list[float] = dataclasses.field(default_factory=list)
    places: list[Place] = dataclasses.field(default_factory=list)

    def add(self, value: float, place: str | Place) -> None:
        if value == value and abs(value) != float("inf"):
            self.values.append(abs(value))
            self.places.append(place if isinstance(place, Place) else Place(place))

    def sort(self) -> None:
        order = sorted(range(len(self.values)), key=self.values.__getitem__)
        self.values = [self.values[i] for i in order]
        self.places = [self.places[i] for i in order]

    def near(self, x: float, tol: float) -> Place | None:
        """The place of a value within `tol` of `x`: a notebook cell's output first (the
        analysis that computed it), then the closest value of a file."""
        lo = bisect.bisect_left(self.values, x - tol)
        hi = bisect.bisect_right(self.values, x + tol)
        if lo >= hi:
            return None
        best = min(
            range(lo, hi),
            key=lambda i: (self.places[i].notebook is None, abs(self.values[i] - x)),
        )
        return self.places[best]


_NUMBERS = re.compile(r"\d+\.\d+(?:[eE][-+]?\d+)?|\d+")
"""A number in a result's text (a table cell, a JSON string, a notebook's output)."""


def _cell_numbers(cell: Any) -> list[float]:
    if isinstance(cell, bool):
        return []
    if isinstance(cell, int | float):
        return [float(cell)]
    text = str(cell)
    try:
        return [float(text)]
    except ValueError:
        return [float(m) for m in _NUMBERS.findall(text)]


def result_values(root: Path, folders: list[str]) -> _Values:
    """Every number in the CSV, TSV and JSON files under `folders` with where it is."""
    values = _Values()
    tree = Beneath(root)
    for name in folders:
        try:
            found = [tree.rel(name)] if tree.is_file(name) else list(tree.walk_files(name))
        except (OSError, PathRefused):  # no such folder, or a link in its place
            continue
        for path in found:
            if path.suffix.lower() not in RESULT_SUFFIXES:
                continue
            rel = path.as_posix()
            try:
                text = tree.read_text(path)
            except (OSError, UnicodeDecodeError):
                continue
            if notebook.is_notebook(rel):
                _notebook_values(text, rel, values)
                continue
            if path.suffix.lower() == ".json":
                try:
                    _walk_json(json.loads(text), rel, "$", values)
                except json.JSONDecodeError:
                    continue
                continue
            rows = list(
                csv.reader(io.StringIO(text), delimiter="\t" if rel.endswith(".tsv") else ",")
            )
            header = rows[0] if rows else []
            for r, row in enumerate(rows[1:], start=2):
                for c, cell in enumerate(row):
                    column = header[c] if c < len(header) else str(c + 1)
                    for v in _cell_numbers(cell):
                        values.add(v, f"{rel} row {r}, column {column} ({cell})")
    values.sort()
    return values


def _notebook_values(text: str, rel: str, values: _Values) -> None:
    """The numbers an executed notebook's cells printed, each placed at its cell and output."""
    try:
        nb = notebook.loads(text, rel)
    except notebook.NotebookProblem:
        return
    for shown in notebook.printed(nb):
        for line in shown.text.splitlines():
            for match in _NUMBERS.finditer(line):
                quoted = line.strip() if len(line.strip()) <= 60 else line.strip()[:57] + "..."
                where = f"{rel} cell {shown.cell_id} (output {shown.output}: {quoted})"
                values.add(float(match.group(0)), Place(where, rel, shown.cell_id))


def _walk_json(node: Any, rel: str, path: str, values: _Values) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            _walk_json(v, rel, f"{path}.{k}", values)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _walk_json(v, rel, f"{path}[{i}]", values)
    else:
        for v in _cell_numbers(node):
            values.add(v, f"{rel} {path} ({node})")


def is_latex(doc: Path) -> bool:
    return doc.suffix.lower() == ".tex"


def _marked_lines(text: str, latex: bool) -> list[tuple[int, str, bool]]:
    """(line number, prose with what holds no claim blanked, marked not measured)."""
    found = []
    if latex:
        for number, line, comment in latex_lines(text):
            found.append((number, _blank(numbers_only(line), _SKIP_ANY), NOT_MEASURED in comment))
        return found
    for number, line in _prose_lines(text):
        marked = f"<!-- {NOT_MEASURED} -->" in line
        found.append((number, _blank(line, _SKIP), marked))
    return found


def _blank(line: str, patterns: list[re.Pattern[str]]) -> str:
    for pattern in patterns:
        line = pattern.sub(lambda m: " " * len(m.group(0)), line)
    return line


def written_numbers(text: str, latex: bool = False) -> list[tuple[str, int, bool]]:
    """(number as written, line, marked not measured) for every decimal number in the prose
    (of a LaTeX document when `latex`)."""
    found = []
    for number, line, marked_line in _marked_lines(text, latex):
        for match in _NUMBER.finditer(line):
            after = line[match.end() : match.end() + 20].lstrip()
            marked = marked_line or after.startswith(f"({NOT_MEASURED})")
            found.append((match.group(1) + match.group(2), number, marked))
    return found


def _tolerance(written: str) -> float:
    mantissa, _, exponent = written.rstrip("%").lower().partition("e")
    places = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 0.5 * 10.0 ** (int(exponent or 0) - places) * (1 + 1e-9)


def numbers(doc: Path, root: Path, folders: list[str]) -> list[Item]:
    """Each decimal number of the prose and tables traced to a result file (or marked)."""
    text = _read(doc)
    values = result_values(root, folders)
    items = []
    latex = is_latex(doc)
    for written, line, marked in written_numbers(text, latex):
        what = f"{written} (line {line})"
        if marked:
            items.append(Item(what, NOT_MEASURED, True))
            continue
        x, tol = float(written.rstrip("%")), _tolerance(written)
        place = values.near(x, tol)
        if place is None and written.endswith("%"):
            place = values.near(x / 100, tol / 100)
        if place is None:
            why = f"in no result file under {', '.join(folders)}"
            mark = f"'% {NOT_MEASURED}' on its line" if latex else f"'({NOT_MEASURED})'"
            items.append(Item(what, f"{why} (mark it {mark} if not measured)", False))
        else:
            items.append(Item(what, place.text, True, place.notebook, place.cell))
    return items
