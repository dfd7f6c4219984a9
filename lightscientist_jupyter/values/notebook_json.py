"""A notebook file's JSON, read and written as nbformat does, without nbformat.

`loads` parses a notebook's text into nodes whose keys read as attributes too (`nb.cells`),
joins the texts a file keeps as lists of lines, drops the keys nbformat drops
(`orig_nbformat`, a signature, a cell's `trusted`), upgrades a 4.x notebook to 4.5 (cell
ids) and validates it against nbformat's own schema, compiled by fastjsonschema; `dumps`
writes it back byte for byte as nbformat (and so JupyterLab) saves it: sorted keys, one
space of indent, texts split into lines, a final newline.

Why not nbformat itself: importing it imports jsonschema, whose optional IRI checker
(`rfc3987_syntax`, which Jupyter installs) builds a grammar at import, 0.7 s of every run,
kernel and command line that read a notebook. A notebook of an older major version (3 and
before) is converted by nbformat, the one case that imports it. `values.notebook` is the
module the rest of the package reads notebooks through.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

CELL_TYPES = ("code", "markdown", "raw")


class NotebookNode(dict[str, Any]):
    """A notebook, a cell or an output: a dict whose keys read as attributes too
    (`nb.cells`, `cell.source`), as nbformat's own node reads."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value


def _node(value: Any) -> Any:
    if isinstance(value, dict):
        return NotebookNode((k, _node(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_node(v) for v in value]
    return value


class NotebookProblem(ValueError):
    """A notebook that cannot be used as asked; the message names the file and what to fix."""


def loads(text: str, where: str) -> Any:
    """The notebook in `text` (named `where` in errors), upgraded to 4.5 and validated
    against nbformat's own schema."""
    try:
        raw = json.loads(text)
    except ValueError:
        shown = f"Notebook does not appear to be JSON: {text!r}"
        shown = shown[:77] + "..." if len(shown) > 80 else shown
        raise NotebookProblem(f"{where} is not a notebook (not nbformat JSON: {shown})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("nbformat"), int):
        raise NotebookProblem(
            f"{where} is not a notebook (not nbformat JSON: it has no 'nbformat' version)"
        )
    if raw["nbformat"] != 4:
        return _converted(text, where)
    nb = _node(raw)
    _rejoin_lines(nb)
    _strip_transient(nb)
    if nb.get("nbformat_minor", 0) < 5:
        nb.nbformat_minor = 5
        for index, cell in enumerate(nb.get("cells") or []):
            if isinstance(cell, dict):
                cell.setdefault("id", f"cell-{index + 1}")
    _validate(nb, where)
    return nb


def _converted(text: str, where: str) -> Any:
    """A notebook of another major version, converted to 4.5 by nbformat."""
    import nbformat

    try:
        converted = nbformat.reads(text, as_version=4)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        first = str(getattr(exc, "message", exc)).splitlines()[0]
        raise NotebookProblem(f"{where} is not a notebook (not nbformat JSON: {first})") from None
    return loads(nbformat.writes(converted), where)


@functools.cache
def _schema_check(minor: int) -> Callable[[Any], Any]:
    """nbformat's JSON schema for 4.`minor` (its latest for a newer minor), compiled; read
    from nbformat's folder without importing the package."""
    import fastjsonschema

    spec = importlib.util.find_spec("nbformat")
    if spec is None or not spec.submodule_search_locations:
        raise NotebookProblem("nbformat is not installed: reinstall lightscientist-jupyter")
    folder = Path(list(spec.submodule_search_locations)[0]) / "v4"
    schema = folder / f"nbformat.v4.{minor}.schema.json"
    if not schema.is_file():
        schema = folder / "nbformat.v4.schema.json"
    return cast(
        Callable[[Any], Any],
        fastjsonschema.compile(json.loads(schema.read_text(encoding="utf-8"))),
    )


_CELL_KEYS = {
    "code": ("id", "metadata", "source", "outputs", "execution_count"),
    "markdown": ("id", "metadata", "source"),
    "raw": ("id", "metadata", "source"),
}


def _cell_problem(cell: Any, number: int) -> str | None:
    """What is wrong with a cell in words a person can act on (the schema's own words for
    a cell are "must be valid exactly by one definition")."""
    if not isinstance(cell, dict):
        return f"cell {number} is not a JSON object"
    kind = cell.get("cell_type")
    if kind not in _CELL_KEYS:
        return f"cell {number} has cell_type {kind!r}: use one of {', '.join(CELL_TYPES)}"
    missing = [key for key in _CELL_KEYS[kind] if key not in cell]
    if missing:
        return f"{kind} cell {number} lacks {', '.join(repr(k) for k in missing)}"
    return None


def _validate(nb: Any, where: str) -> None:
    import fastjsonschema

    cells = nb.get("cells")
    for number, cell in enumerate(cells if isinstance(cells, list) else [], start=1):
        problem = _cell_problem(cell, number)
        if problem is not None:
            raise NotebookProblem(f"{where} is not a valid notebook: {problem}")
    try:
        _schema_check(int(nb.get("nbformat_minor", 5)))(nb)
    except fastjsonschema.JsonSchemaValueException as exc:
        message = str(exc.message).splitlines()[0]
        # `data.cells[1].outputs[0] must…`: cell 2's output 1 must…
        message = re.sub(
            r"data\.cells\[(\d+)\]",
            lambda m: f"cell {int(m.group(1)) + 1}",
            message,
        ).replace("data.", "the notebook's ")
        if message.startswith("data "):
            message = "the notebook " + message[len("data ") :]
        raise NotebookProblem(f"{where} is not a valid notebook: {message}") from None
    seen: set[str] = set()
    for cell in nb.cells:
        if cell["id"] in seen:
            raise NotebookProblem(
                f"{where} is not a valid notebook: cell id {cell['id']!r} is used twice "
                "(give each cell an id of its own)"
            )
        seen.add(cell["id"])


def dumps(nb: Any) -> str:
    """The notebook as it is saved, as nbformat saves it: sorted keys, one space of indent,
    texts split into lines, the transient keys left out, a final newline."""
    saved = copy.deepcopy(nb)
    _split_lines(saved)
    _strip_transient(saved)
    return (
        json.dumps(saved, indent=1, sort_keys=True, separators=(",", ": "), ensure_ascii=False)
        + "\n"
    )


# the multi-line texts nbformat keeps as lists of lines in a file, and how it joins them
_SPLIT_MIMES = ("application/javascript", "image/svg+xml")


def _is_json_mime(mime: str) -> bool:
    return mime == "application/json" or (
        mime.startswith("application/") and mime.endswith("+json")
    )


def _rejoin_lines(nb: Any) -> None:
    for cell in nb.get("cells") or []:
        if not isinstance(cell, dict):
            continue  # the schema names it
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
        for attachment in (cell.get("attachments") or {}).values():
            _rejoin_bundle(attachment)
        if cell.get("cell_type") == "code":
            for output in cell.get("outputs") or []:
                kind = output.get("output_type", "")
                if kind in ("execute_result", "display_data"):
                    _rejoin_bundle(output.get("data") or {})
                elif kind and isinstance(output.get("text", ""), list):
                    output["text"] = "".join(output["text"])


def _rejoin_bundle(data: Any) -> None:
    for mime, value in list(data.items()):
        if not _is_json_mime(mime) and isinstance(value, list):
            if all(isinstance(line, str) for line in value):
                data[mime] = "".join(value)


def _split_lines(nb: Any) -> None:
    for cell in nb.cells:
        if isinstance(cell.get("source"), str):
            cell["source"] = cell["source"].splitlines(True)
        for attachment in (cell.get("attachments") or {}).values():
            _split_bundle(attachment)
        if cell.get("cell_type") == "code":
            for output in cell.get("outputs") or []:
                kind = output.get("output_type")
                if kind in ("execute_result", "display_data"):
                    _split_bundle(output.get("data") or {})
                elif kind == "stream" and isinstance(output.get("text"), str):
                    output["text"] = output["text"].splitlines(True)


def _split_bundle(data: Any) -> None:
    for mime, value in list(data.items()):
        if isinstance(value, str) and (mime.startswith("text/") or mime in _SPLIT_MIMES):
            data[mime] = value.splitlines(True)


def _strip_transient(nb: Any) -> None:
    metadata = nb.get("metadata")
    if isinstance(metadata, dict):
        for key in ("orig_nbformat", "orig_nbformat_minor", "signature"):
            metadata.pop(key, None)
    for cell in nb.get("cells") or []:
        if isinstance(cell, dict) and isinstance(cell.get("metadata"), dict):
            cell["metadata"].pop("trusted", None)
