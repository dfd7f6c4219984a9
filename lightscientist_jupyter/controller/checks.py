"""The deterministic checks a stage may list in the table, run by layer 1 at its finish.

    checks = ["citations:paper/paper.tex", "numbers:paper/paper.tex"]
    checks = ["numbers:paper/paper.tex:experiment,results"]   # folders of result files

`citations:DOC` — every citation in DOC resolves to the references file and every entry there
came from a literature tool; `numbers:DOC[:FOLDERS]` — every decimal number in DOC's prose and
tables is in a result file under FOLDERS (default `experiment`), or is marked not measured.
A failing check refuses the finish with each problem named (see `rules.finish_refusal`).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from lightscientist_jupyter.controller import provenance
from lightscientist_jupyter.controller.provenance import Item
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.literature.config import BOUND_KEYS, bound_problem

KINDS = ("citations", "numbers")
DEFAULT_FOLDERS = ("experiment",)


def parse(spec: str) -> tuple[str, str, list[str]]:
    """`(kind, document, folders)` of a check; raises ValueError saying what is wrong."""
    kind, _, rest = spec.partition(":")
    doc, _, folders = rest.partition(":")
    if kind not in KINDS:
        raise ValueError(f"'{spec}': a check is one of {', '.join(k + ':DOC' for k in KINDS)}")
    if kind == "citations" and folders:
        raise ValueError(f"'{spec}': citations takes one document (citations:DOC)")
    names = [f.strip() for f in folders.split(",") if f.strip()] or list(DEFAULT_FOLDERS)
    for path in [doc, *names]:
        pure = PurePosixPath(path)
        if not path.strip() or pure.is_absolute() or ".." in pure.parts:
            raise ValueError(f"'{spec}': '{path}' must be a path inside the workspace")
    return kind, doc, names


def spec_problem(spec: str) -> str | None:
    """What is wrong with a check's text (for the table's loader), or None."""
    try:
        parse(spec)
    except ValueError as exc:
        return str(exc)
    return None


def check_problems(where: str, specs: tuple[object, ...]) -> list[str]:
    """The stage table's problems with a stage's `checks` list (`where` names the key)."""
    found = []
    for spec in specs:
        problem = spec_problem(spec) if isinstance(spec, str) else f"{spec!r} is not a string"
        if problem:
            found.append(f"{where}: {problem}")
    return found


LITERATURE_KEYS = ("library", "references", *BOUND_KEYS)


def literature_table(path: Path, raw: object, problems: list[str]) -> dict[str, object]:
    """The stage table's `[literature]`: `library` (a path or a list, relative to the table
    file), `references` (the BibTeX file `cite` writes, relative to the workspace), and the
    bounds of each request to a source, `deadline` (seconds) and `max_bytes`."""
    if raw is None:
        return {}
    where = "table [literature]"
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be a table")
        return {}
    for key in raw:
        if key not in LITERATURE_KEYS:
            problems.append(f"{where}: unknown key '{key}'; expected {', '.join(LITERATURE_KEYS)}")
    out: dict[str, object] = {}
    library = raw.get("library", [])
    library = [library] if isinstance(library, str) else library
    if not isinstance(library, list) or not all(isinstance(p, str) and p for p in library):
        problems.append(f"{where}, key 'library': a path or a list of paths (.bib, .json, folder)")
    else:
        paths = [(path.parent / p).expanduser().resolve() for p in library]
        problems += [f"{where}, key 'library': {p} does not exist" for p in paths if not p.exists()]
        out["library"] = [str(p) for p in paths]
    references = raw.get("references")
    if references is not None:
        pure = PurePosixPath(str(references))
        if not isinstance(references, str) or pure.is_absolute() or ".." in pure.parts:
            problems.append(f"{where}, key 'references': a .bib path inside the workspace")
        else:
            out["references"] = references
    for key in BOUND_KEYS:
        problem = bound_problem(key, raw[key]) if key in raw else None
        if problem:
            problems.append(f"{where}, key '{key}': {problem}")
        elif key in raw:
            out[key] = raw[key]
    return out


def report(spec: str, root: Path) -> list[Item]:
    """Every item of one check (a document that cannot be read is one failed item)."""
    kind, doc, folders = parse(spec)
    try:
        if kind == "citations":
            return provenance.citations(root / doc, root)
        return provenance.numbers(root / doc, root, folders)
    except LightScientistError as exc:
        return [Item(doc, str(exc), False)]


def problems(specs: tuple[str, ...] | list[str], root: Path) -> list[str]:
    """The failed items of the checks, as `check: item -> why` (empty when all pass)."""
    found = []
    for spec in specs:
        kind = spec.partition(":")[0]
        found += [f"{kind}: {i.what} {i.trace}" for i in report(spec, root) if not i.ok]
    return found
