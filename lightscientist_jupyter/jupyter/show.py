"""Results inline: a workspace file as the object a notebook displays best.

`%lightscientist show` and the gate panel's previews both go through `load`, a dispatch
table from file suffix to loader: Markdown as `Markdown` (with the images it links shown
inline, since a relative link in a cell output would resolve against the notebook, not the
workspace), PNG/JPEG/GIF as `Image`, SVG as `SVG`, CSV/TSV as a pandas `DataFrame`, JSON as
`JSON`, anything else as text. `bundle` turns a loaded object into a MIME bundle by calling
its `_repr_*_` methods directly, so the flusher thread can fill an `Output` widget without
going through the shell's display machinery.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from IPython.display import JSON, SVG, Image, Markdown, Pretty

from lightscientist_jupyter.errors import LightScientistError

TEXT_MAX = 400_000
"""The most characters of a text file shown (the rest is cut, and the output says so)."""
IMAGE_SUFFIXES = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".gif": "gif"}
_IMAGE_LINK = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


class ShowError(LightScientistError):
    """A file that cannot be shown (missing, unreadable)."""


def _read_text(path: Path, limit: int) -> str:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            text = fh.read(limit + 1)
    except OSError as exc:
        raise ShowError(f"cannot read {path}: {exc.strerror}") from None
    if len(text) > limit:
        text = text[:limit] + f"\n\n… (cut at {limit:,} characters; the file is {path})"
    return text


def load_markdown(path: Path, limit: int = TEXT_MAX) -> list[Any]:
    """Markdown split around its image links, each image loaded from beside the file."""
    text = _read_text(path, limit)
    parts: list[Any] = []
    at = 0
    for match in _IMAGE_LINK.finditer(text):
        target = match.group(2)
        image = (path.parent / target).resolve()
        if (
            re.match(r"^[a-z]+:", target)
            or image.suffix.lower() not in IMAGE_SUFFIXES
            or not image.is_file()
        ):
            continue
        before = text[at : match.start()]
        if before.strip():
            parts.append(Markdown(before))
        parts.append(Image(filename=str(image)))
        if match.group(1).strip():
            parts.append(Markdown(f"*{match.group(1).strip()}*"))
        at = match.end()
    rest = text[at:]
    if rest.strip() or not parts:
        parts.append(Markdown(rest))
    return parts


def load_csv(path: Path, *, sep: str = ",", nrows: int | None = None) -> Any:
    import pandas as pd

    try:
        return pd.read_csv(path, sep=sep, nrows=nrows)
    except (ValueError, OSError) as exc:  # pandas' parser errors are ValueErrors
        raise ShowError(f"cannot read {path} as a table: {exc}") from None


def load_json(path: Path) -> Any:
    try:
        return JSON(json.loads(_read_text(path, TEXT_MAX)))
    except ValueError:
        return Pretty(_read_text(path, TEXT_MAX))


LOADERS: dict[str, Callable[[Path], Any]] = {
    ".md": load_markdown,
    ".markdown": load_markdown,
    **{suffix: (lambda p: Image(filename=str(p))) for suffix in IMAGE_SUFFIXES},
    ".svg": lambda p: SVG(filename=str(p)),
    ".csv": load_csv,
    ".tsv": lambda p: load_csv(p, sep="\t"),
    ".json": load_json,
}


def load(path: Path) -> list[Any]:
    """The display objects for one file (a Markdown file may give several)."""
    if not path.exists():
        raise ShowError(f"{path} does not exist")
    if path.is_dir():
        names = sorted(
            p.name + ("/" if p.is_dir() else "")
            for p in path.iterdir()
            if not p.name.startswith(".")
        )
        return [Pretty(f"{path}/\n" + "\n".join(f"  {n}" for n in names))]
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        return [Pretty(_read_text(path, TEXT_MAX))]
    result = loader(path)
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
    """Short MIME bundles previewing the workspace file `rel`: a heading, then its start."""
    path = root / rel
    head = {"text/markdown": f"**`{rel}`**", "text/plain": rel}
    if not path.is_file():
        return [head, {"text/plain": "(missing)", "text/html": "<i>(missing)</i>"}]
    suffix = path.suffix.lower()
    try:
        if suffix in (".md", ".markdown"):
            lines = _read_text(path, 20_000).splitlines()
            text = "\n".join(lines[:PREVIEW_LINES])
            if len(lines) > PREVIEW_LINES:
                text += f"\n\n*… {len(lines) - PREVIEW_LINES} more lines*"
            return [head, {"text/markdown": text, "text/plain": text}]
        if suffix in (".csv", ".tsv"):
            frame = load_csv(path, sep="\t" if suffix == ".tsv" else ",", nrows=PREVIEW_ROWS)
            return [
                head,
                {
                    "text/html": frame.to_html(max_rows=PREVIEW_ROWS),
                    "text/plain": frame.to_string(max_rows=PREVIEW_ROWS),
                },
            ]
        if suffix in IMAGE_SUFFIXES or suffix == ".svg":
            return [head] + [bundle(obj) for obj in load(path)]
        text = "\n".join(_read_text(path, 20_000).splitlines()[:PREVIEW_LINES])
        return [
            head,
            {
                "text/plain": text,
                "text/html": f"<pre style='font-size:11px'>{html.escape(text)}</pre>",
            },
        ]
    except ShowError as exc:
        return [head, {"text/plain": str(exc)}]
