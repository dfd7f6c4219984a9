"""Read BibTeX and CSL-JSON (a Zotero or Mendeley export) into records, without a dependency.

The BibTeX reader takes what exporters write: `@type{key, field = {value} | "value" | 123, …}`
with nested braces; `@string`, `@comment` and `@preamble` blocks are skipped. A file that is
not readable is a `LiteratureError` naming it and the line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import read_named
from lightscientist_jupyter.errors import LiteratureError
from lightscientist_jupyter.literature.records import Paper

_ENTRY = re.compile(r"@\s*([A-Za-z]+)\s*[{(]")
_FIELD = re.compile(r"\s*([A-Za-z][\w:-]*)\s*=\s*")


def parse_bibtex(text: str, where: str = "the BibTeX text") -> list[tuple[str, dict[str, str]]]:
    """`(key, fields)` per entry, field names lower-cased, values with braces removed."""
    entries: list[tuple[str, dict[str, str]]] = []
    pos = 0
    while (match := _ENTRY.search(text, pos)) is not None:
        kind = match.group(1).lower()
        start = match.end()
        end = _closing(text, start - 1)
        if end < 0:
            line = text.count("\n", 0, match.start()) + 1
            raise LiteratureError(f"{where}, line {line}: an entry's braces are not closed")
        pos = end + 1
        if kind in ("comment", "preamble", "string"):
            continue
        body = text[start:end]
        key, _, rest = body.partition(",")
        fields = _fields(rest)
        fields["entrytype"] = kind
        entries.append((key.strip(), fields))
    return entries


def _closing(text: str, open_at: int) -> int:
    depth = 0
    closer = "}" if text[open_at] == "{" else ")"
    for i in range(open_at, len(text)):
        c = text[i]
        if c == "{" or (c == "(" and closer == ")" and depth == 0):
            depth += 1
        elif c == "}" or (c == ")" and closer == ")" and depth == 1):
            depth -= 1
            if depth == 0:
                return i
    return -1


def _fields(body: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    pos = 0
    while (match := _FIELD.match(body, pos)) is not None:
        name, pos = match.group(1).lower(), match.end()
        if pos < len(body) and body[pos] in '{"':
            end = _value_end(body, pos)
            value = body[pos + 1 : end]
            pos = end + 1
        else:
            m = re.match(r"[^,]*", body[pos:])
            value = m.group(0) if m else ""
            pos += len(value)
        value = re.sub(r"\\([&%#_$])", r"\1", value)  # LaTeX's escapes (`records._braced`)
        fields[name] = " ".join(value.replace("{", "").replace("}", "").split())
        comma = body.find(",", pos)
        if comma < 0:
            break
        pos = comma + 1
    return fields


def _value_end(body: str, pos: int) -> int:
    if body[pos] == '"':
        depth = 0
        for i in range(pos + 1, len(body)):
            if body[i] == "{":
                depth += 1
            elif body[i] == "}":
                depth -= 1
            elif body[i] == '"' and depth == 0:
                return i
        return len(body)
    depth = 0
    for i in range(pos, len(body)):
        if body[i] == "{":
            depth += 1
        elif body[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return len(body)


def paper_of_fields(fields: dict[str, str], source: str = "library") -> Paper:
    """A record from one BibTeX entry's fields."""
    authors = [a.strip() for a in re.split(r"\s+and\s+", fields.get("author", "")) if a.strip()]
    year = re.search(r"\d{4}", fields.get("year", "") or fields.get("date", ""))
    arxiv = (
        fields.get("eprint", "") if "arxiv" in fields.get("archiveprefix", "arxiv").lower() else ""
    )
    return Paper(
        title=fields.get("title", ""),
        authors=[_display_name(a) for a in authors],
        year=int(year.group(0)) if year else None,
        venue=fields.get("booktitle") or fields.get("journal") or fields.get("publisher", ""),
        doi=fields.get("doi", ""),
        arxiv=arxiv or (fields.get("url", "") if "arxiv.org" in fields.get("url", "") else ""),
        url=fields.get("url", ""),
        source=source,
    )


def _display_name(name: str) -> str:
    """`Goyal, Priya` -> `Priya Goyal` (how the other sources write names)."""
    if "," in name:
        last, _, first = name.partition(",")
        return f"{first.strip()} {last.strip()}".strip()
    return name


def paper_of_csl(item: dict[str, Any], source: str = "library") -> Paper:
    """A record from one CSL-JSON item."""
    authors = [
        " ".join(p for p in (a.get("given", ""), a.get("family", "")) if p) or a.get("literal", "")
        for a in item.get("author") or []
        if isinstance(a, dict)
    ]
    parts = ((item.get("issued") or {}).get("date-parts") or [[None]])[0]
    year = parts[0] if parts and isinstance(parts[0], int) else None
    note = " ".join(str(item.get(k, "")) for k in ("URL", "number", "note"))
    return Paper(
        title=str(item.get("title", "")),
        authors=[a for a in authors if a],
        year=year,
        venue=str(item.get("container-title", "") or item.get("publisher", "")),
        doi=str(item.get("DOI", "")),
        arxiv=note if "arxiv" in note.lower() else "",
        url=str(item.get("URL", "")),
        source=source,
    )


def read_library_file(path: Path, root: Path | None = None) -> list[Paper]:
    """Every record of one .bib or CSL-JSON (.json) file (through no link when it lies in
    the workspace `root`)."""
    try:
        text = read_named(path, root) if root is not None else path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LiteratureError(f"library file {path} cannot be read: {exc}") from None
    if path.suffix.lower() == ".json":
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LiteratureError(f"library file {path}: not valid CSL-JSON ({exc})") from None
        if isinstance(items, dict):
            items = items.get("items", [])
        if not isinstance(items, list):
            raise LiteratureError(f"library file {path}: CSL-JSON must be a list of items")
        return [paper_of_csl(i) for i in items if isinstance(i, dict) and i.get("title")]
    return [paper_of_fields(f) for _, f in parse_bibtex(text, str(path)) if f.get("title")]
