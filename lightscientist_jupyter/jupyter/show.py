"""Results inline: a workspace file as the object a notebook displays best.

`%lightscientist show` and the gate panel's previews both go through `load`, a dispatch
table from file suffix to loader: Markdown as `Markdown` (with the images it links shown
inline, since a relative link in a cell output would resolve against the notebook, not the
workspace), PNG/JPEG/GIF as `Image`, SVG as `SVG`, CSV/TSV as a pandas `DataFrame`, JSON as
`JSON`, a notebook as its cells and outputs (`notebook_view`), LaTeX and BibTeX as a code
block, anything else as text. `bundle` turns a loaded object into a MIME bundle by calling its
`_repr_*_` methods directly, so the flusher thread can fill an `Output` widget without going
through the shell's display machinery.

The path comes from a person or a model, and a worker's command may have planted a link
anywhere in the workspace, so every file is read through `beneath.Beneath` of the workspace:
`/x` is the workspace's `x`, `..` out and any link on the way are refused, and the refusal is
the one line shown in place of the file (never what the link points to).
"""

from __future__ import annotations

import html
import io
import json
import posixpath
import re
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from IPython.display import JSON, SVG, Image, Markdown, Pretty

from lightscientist_jupyter.app import notebooks
from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.jupyter import notebook_view
from lightscientist_jupyter.jupyter.notebook_view import fenced
from lightscientist_jupyter.literature.bibtex import parse_bibtex
from lightscientist_jupyter.values.notebook import SUFFIX, reading

TEXT_MAX = 400_000
"""The most characters of a text file shown (the rest is cut, and the output says so)."""
IMAGE_SUFFIXES = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".gif": "gif"}
_IMAGE_LINK = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


class ShowError(LightScientistError):
    """A file that cannot be shown (missing, unreadable, refused by the guarded path)."""

    def __init__(self, message: str, *, missing: bool = False):
        super().__init__(message)
        self.missing = missing


def _why(files: Beneath, rel: str | PurePosixPath, exc: OSError) -> ShowError:
    """The one line a reader sees for `exc`: a refusal names the file and what is there."""
    if isinstance(exc, PathRefused):
        return ShowError(str(exc))
    path = files.root / rel
    if isinstance(exc, FileNotFoundError):
        return ShowError(f"{path} does not exist", missing=True)
    return ShowError(f"cannot read {path}: {exc.strerror or exc}")


def _read_bytes(files: Beneath, rel: str | PurePosixPath) -> bytes:
    try:
        return files.read_bytes(rel)
    except OSError as exc:
        raise _why(files, rel, exc) from None


def _read_text(files: Beneath, rel: str | PurePosixPath, limit: int) -> str:
    try:
        with io.TextIOWrapper(files.open_read(rel), encoding="utf-8", errors="replace") as fh:
            text = fh.read(limit + 1)
    except OSError as exc:
        raise _why(files, rel, exc) from None
    if len(text) > limit:
        text = text[:limit] + f"\n\n… (cut at {limit:,} characters; the file is {files.path(rel)})"
    return text


def _image_beside(files: Beneath, rel: str, target: str) -> PurePosixPath | None:
    """The workspace path of the image `target` a Markdown file `rel` links to (a leading
    `/` is the workspace root, as workers write it); None for a URL, a path out of the
    workspace or a file that is not an image."""
    if re.match(r"^[a-z]+:", target):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
    if joined.startswith("../") or joined == "..":
        return None
    try:
        image = files.rel(joined)
    except PathRefused:
        return None
    return image if image.suffix.lower() in IMAGE_SUFFIXES else None


_CITATION = re.compile(r"\[(@[\w:.\-/]+(?:\s*;\s*@[\w:.\-/]+)*)\]")
BIB_PLACES = ("{folder}/references.bib", "paper/references.bib", "references.bib")
"""Where a Markdown file's works are looked for: beside it, the paper's, the project's."""


def _works(files: Beneath, rel: str) -> dict[str, dict[str, str]]:
    """The BibTeX entries a Markdown file may cite, by key (none when no file reads)."""
    folder = str(PurePosixPath(rel).parent)
    works: dict[str, dict[str, str]] = {}
    for place in BIB_PLACES:
        bib = PurePosixPath(place.format(folder=folder)).as_posix().removeprefix("./")
        try:
            text = _read_text(files, bib, TEXT_MAX)
            entries = parse_bibtex(text, bib)
        except (ShowError, LightScientistError):
            continue
        for key, fields in entries:
            works.setdefault(key, fields)
    return works


def _reference(fields: dict[str, str]) -> str:
    """One entry of a reference list, in Markdown: authors (year). *Title*. Venue."""
    authors = [a.strip() for a in fields.get("author", "").split(" and ") if a.strip()]
    who = ", ".join(authors[:3]) + (" et al." if len(authors) > 3 else "")
    venue = fields.get("journal") or fields.get("booktitle") or fields.get("publisher") or ""
    doi = fields.get("doi", "")
    parts = [f"{who or 'Anonymous'} ({fields.get('year', 'n.d.')}). *{fields.get('title', '?')}*."]
    if venue:
        parts.append(f"{venue}.")
    if doi:
        parts.append(f"[doi:{doi}](https://doi.org/{doi})")
    return " ".join(parts)


def cite(text: str, works: dict[str, dict[str, str]]) -> str:
    """`text` with its Pandoc citations (`[@key]`, `[@a; @b]`) numbered as they first appear
    and a References list at its end; a key no work names stays as it is, marked."""
    numbers: dict[str, int] = {}

    def number(match: re.Match[str]) -> str:
        keys = [k.strip().lstrip("@") for k in match.group(1).split(";")]
        if not all(k in works for k in keys):
            return match.group(0) + " *(not in the references)*"
        shown = [str(numbers.setdefault(k, len(numbers) + 1)) for k in keys]
        return "[" + ", ".join(shown) + "]"

    cited = _CITATION.sub(number, text)
    if not numbers:
        return cited
    listing = "\n".join(f"{n}. {_reference(works[key])}" for key, n in numbers.items())
    return f"{cited.rstrip()}\n\n### References\n\n{listing}\n"


def load_markdown(files: Beneath, rel: str, limit: int = TEXT_MAX) -> list[Any]:
    """Markdown split around its image links, each image loaded from beside the file; its
    citations numbered, with the works they name listed at its end (`cite`)."""
    text = _read_text(files, rel, limit)
    if _CITATION.search(text):
        text = cite(text, _works(files, rel))
    parts: list[Any] = []
    at = 0
    for match in _IMAGE_LINK.finditer(text):
        image = _image_beside(files, rel, match.group(2))
        shown: Image | Markdown | None
        try:
            shown = None if image is None else load_image(files, image)
        except ShowError as exc:  # a link where the image should be: say so in its place
            shown = None if exc.missing else Markdown(f"*{exc}*")
        if shown is None:
            continue
        before = text[at : match.start()]
        if before.strip():
            parts.append(Markdown(before))
        parts.append(shown)
        if match.group(1).strip():
            parts.append(Markdown(f"*{match.group(1).strip()}*"))
        at = match.end()
    rest = text[at:]
    if rest.strip() or not parts:
        parts.append(Markdown(rest))
    return parts


def load_image(files: Beneath, rel: str | PurePosixPath) -> Image:
    suffix = PurePosixPath(rel).suffix.lower()
    return Image(data=_read_bytes(files, rel), format=IMAGE_SUFFIXES[suffix])


def load_svg(files: Beneath, rel: str) -> SVG:
    return SVG(data=_read_bytes(files, rel).decode("utf-8", errors="replace"))


def load_csv(files: Beneath, rel: str, *, sep: str = ",", nrows: int | None = None) -> Any:
    import pandas as pd

    try:
        with files.open_read(rel) as fh:
            return pd.read_csv(fh, sep=sep, nrows=nrows)
    except PathRefused as exc:
        raise _why(files, rel, exc) from None
    except (ValueError, OSError) as exc:  # pandas' parser errors are ValueErrors
        raise ShowError(f"cannot read {files.path(rel)} as a table: {exc}") from None


def load_source(files: Beneath, rel: str, language: str) -> Markdown:
    """A source file as a highlighted code block (its fence longer than any run of backticks
    inside, so the source cannot close it)."""
    return Markdown(fenced(_read_text(files, rel, TEXT_MAX), language))


def load_notebook(files: Beneath, rel: str) -> list[Any]:
    """A notebook's cells, each labelled with its id, and their saved outputs."""
    try:
        nb = notebooks.read_notebook(files, rel)
    except notebooks.NotebookUnavailable as exc:
        raise ShowError(str(exc)) from None
    return notebook_view.cells(nb, rel)


def load_json(files: Beneath, rel: str) -> Any:
    text = _read_text(files, rel, TEXT_MAX)
    try:
        return JSON(json.loads(text))
    except ValueError:
        return Pretty(text)


LOADERS: dict[str, Callable[[Beneath, str], Any]] = {
    ".md": load_markdown,
    ".markdown": load_markdown,
    **{suffix: load_image for suffix in IMAGE_SUFFIXES},
    ".svg": load_svg,
    ".csv": load_csv,
    ".tsv": lambda files, rel: load_csv(files, rel, sep="\t"),
    ".json": load_json,
    SUFFIX: load_notebook,
    ".tex": lambda files, rel: load_source(files, rel, "latex"),
    ".bib": lambda files, rel: load_source(files, rel, "bibtex"),
}


def _listing(files: Beneath, rel: str) -> Pretty:
    """A folder's entries; a link is named as one, never followed."""
    try:
        entries = files.scandir(rel)
    except OSError as exc:
        raise _why(files, rel, exc) from None
    names = [
        e.name
        + (
            "/"
            if e.is_dir(follow_symlinks=False)
            else " (a symbolic link)"
            if e.is_symlink()
            else ""
        )
        for e in entries
        if not e.name.startswith(".")
    ]
    return Pretty(f"{files.path(rel)}/\n" + "\n".join(f"  {n}" for n in names))


def load(files: Beneath, rel: str) -> list[Any]:
    """The display objects for the workspace file `rel` (a Markdown file may give several),
    read beneath the workspace through no link."""
    try:
        found = files.lstat(rel)
    except OSError as exc:  # '..' out of the workspace, a link on the way
        raise _why(files, rel, exc) from None
    if found is None:
        raise ShowError(f"{files.path(rel)} does not exist", missing=True)
    if stat.S_ISDIR(found.st_mode):
        return [_listing(files, rel)]
    loader = LOADERS.get(PurePosixPath(rel).suffix.lower())
    if loader is None:
        return [Pretty(_read_text(files, rel, TEXT_MAX))]
    result = loader(files, rel)
    return result if isinstance(result, list) else [result]


# ------------------------------------------------------------------------- previews

PREVIEW_LINES = 30
PREVIEW_ROWS = 8


def bundle(obj: Any) -> dict[str, Any]:
    """A MIME bundle of `obj` from its `_repr_*_` methods (no shell involved)."""
    data: dict[str, Any] = {"text/plain": repr(obj)}
    for mime, method in (
        ("text/markdown", "_repr_markdown_"),
        ("image/png", "_repr_png_"),
        ("image/jpeg", "_repr_jpeg_"),
        ("image/svg+xml", "_repr_svg_"),
        ("text/html", "_repr_html_"),
    ):
        fn = getattr(obj, method, None)
        if fn is None:
            continue
        value = fn()
        if isinstance(value, tuple):  # (data, metadata)
            value = value[0]
        if value is None:
            continue
        if isinstance(value, bytes):
            import base64

            value = base64.b64encode(value).decode("ascii")
        data[mime] = value
    if isinstance(obj, Pretty):
        data["text/plain"] = obj.data
    return data


def preview(root: Path, rel: str) -> list[dict[str, Any]]:
    """Short MIME bundles previewing the workspace file `rel`: a heading, then its start
    (or the one line saying why it cannot be shown: missing, a link, …)."""
    files = Beneath(root)
    head = {"text/markdown": f"**`{rel}`**", "text/plain": rel}
    suffix = PurePosixPath(rel).suffix.lower()
    try:
        if suffix in (".md", ".markdown"):
            lines = _read_text(files, rel, 20_000).splitlines()
            text = "\n".join(lines[:PREVIEW_LINES])
            if len(lines) > PREVIEW_LINES:
                text += f"\n\n*… {len(lines) - PREVIEW_LINES} more lines*"
            return [head, {"text/markdown": text, "text/plain": text}]
        if suffix in (".csv", ".tsv"):
            frame = load_csv(files, rel, sep="\t" if suffix == ".tsv" else ",", nrows=PREVIEW_ROWS)
            return [
                head,
                {
                    "text/html": frame.to_html(max_rows=PREVIEW_ROWS),
                    "text/plain": frame.to_string(max_rows=PREVIEW_ROWS),
                },
            ]
        if suffix == SUFFIX:  # its cells' ids, sources and outputs, not its JSON
            try:
                nb = notebooks.read_notebook(files, rel)
            except notebooks.NotebookUnavailable as exc:
                return [head, {"text/plain": str(exc)}]
            text = "\n".join(reading(nb, rel, 300).splitlines()[:PREVIEW_LINES])
            return [head, {"text/plain": text}]
        if suffix in IMAGE_SUFFIXES or suffix == ".svg":
            return [head] + [bundle(obj) for obj in load(files, rel)]
        text = "\n".join(_read_text(files, rel, 20_000).splitlines()[:PREVIEW_LINES])
        return [
            head,
            {
                "text/plain": text,
                "text/html": f"<pre style='font-size:11px'>{html.escape(text)}</pre>",
            },
        ]
    except ShowError as exc:
        if exc.missing:
            return [head, {"text/plain": "(missing)", "text/html": "<i>(missing)</i>"}]
        return [head, {"text/plain": str(exc)}]
