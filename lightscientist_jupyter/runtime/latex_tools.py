"""The workers' `build_pdf` tool: a LaTeX source of the workspace compiled to a PDF beside it.

The build runs `latexmk` (which runs BibTeX as often as needed) inside the worker's sandbox,
exactly as one of its shell commands (`shell.run_command` with its confinement and its
allow-listed environment: no secret reaches TeX). Auxiliary files go to a folder in the
worker's home, so the source's folder receives nothing but the PDF, copied there by the kernel
through the guarded path (`Beneath`). The result is one short message a model can act on: the
PDF's pages, size and build time; or the first LaTeX error with its file, line and the text of
that line; or, on a machine without TeX, one line saying so (the source is kept).
"""

from __future__ import annotations

import re
import shlex
import shutil
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from langchain_core.tools import BaseTool, tool

from lightscientist_jupyter._fs import NO_LINKS, mkdirs
from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.runtime.sandbox import command_env
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkerShell
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups, run_command
from lightscientist_jupyter.workspace import STATE_DIR

DEFAULT_SOURCE = "paper/paper.tex"
TIMEOUT_S = 300.0
TOOLCHAIN = ("latexmk", "pdflatex")
LATEXMK_OPTIONS = ("-pdf", "-interaction=nonstopmode", "-file-line-error", "-halt-on-error")
MAX_ERRORS = 3
"""Errors named in one result: the first is the one to fix, later ones often follow from it."""

_FILE_LINE = re.compile(r"^(?P<file>[^\s:][^:]*\.(?:tex|sty|cls|bbl|aux|ltx)):(?P<line>\d+): (.*)$")
_CONTEXT = re.compile(r"^l\.(\d+) (.*)$")
_CITATION = re.compile(r"Citation [`'](?P<key>[^']*)' on page \d+ undefined on input line (\d+)")
_OUTPUT = re.compile(r"Output written on .*\((\d+) pages?, (\d+) bytes\)")
_BIB_ERROR = re.compile(r"^(?P<what>.*?)---line (?P<line>\d+) of file (?P<file>\S+)")


def missing_toolchain() -> list[str]:
    """The programs of the toolchain not found on the kernel's `PATH`."""
    return [name for name in TOOLCHAIN if shutil.which(name) is None]


def no_toolchain_line(source: str, missing: list[str]) -> str:
    return (
        f"no TeX engine here ({' and '.join(missing)} not found; scripts/setup installs them): "
        f"{source} is kept, no PDF built"
    )


def _refusal(tree: Beneath, source: str) -> tuple[PurePosixPath | None, str]:
    """The source's workspace-relative path, or None and why it is refused."""
    try:
        rel = tree.rel(source)
    except PathRefused as exc:
        return None, f"build_pdf refused {source}: {exc}"
    if rel.suffix != ".tex" or not rel.parts:
        return None, f"build_pdf refused {source}: give a LaTeX source, a .tex file"
    if rel.parts[0] == STATE_DIR:
        return None, f"build_pdf refused {source}: {STATE_DIR}/ belongs to LightScientist"
    try:
        entry = tree.lstat(rel)
    except PathRefused as exc:
        return None, f"build_pdf refused {source}: {exc}"
    if entry is None:
        return None, f"{rel} does not exist: write the LaTeX source first"
    if not tree.is_file(rel):
        return None, f"build_pdf refused {rel}: it is a link or not a regular file"
    return rel, ""


def build_pdf(
    root: Path,
    source: str,
    shell: WorkerShell,
    groups: ProcessGroups | None = None,
    timeout: float = TIMEOUT_S,
) -> str:
    """Compile `source` (workspace-relative) to the PDF beside it; the tool's message."""
    tree = Beneath(root)
    rel, refused = _refusal(tree, source)
    if rel is None:
        return refused
    missing = missing_toolchain()
    if missing:
        return no_toolchain_line(str(rel), missing)
    aux = shell.home / "latex" / "--".join(rel.with_suffix("").parts)
    mkdirs(aux)
    folder = rel.parent.as_posix()
    latexmk = Path(str(shutil.which("latexmk")))
    command = " ".join(
        shlex.quote(word) for word in (str(latexmk), *LATEXMK_OPTIONS, f"-outdir={aux}", rel.name)
    )
    env = command_env.worker_env(root, shell.home)
    # latexmk finds pdflatex and bibtex beside it (a TeX Live outside /usr/bin too)
    env["PATH"] = f"{latexmk.parent}:{env['PATH']}"
    env["max_print_line"] = "10000"  # TeX's log lines unwrapped, so that they can be read
    started = time.monotonic()
    result = run_command(
        f"cd {shlex.quote(folder)} && {command}",
        cwd=root,
        env=env,
        log_path=shell.log_dir / f"{next(shell.counter):04d}.log",
        timeout=timeout,
        cancel=shell.cancel,
        groups=groups,
        owner=shell.worker_id,
        confinement=shell.confinement,
    )
    took = time.monotonic() - started
    log = _read(aux / f"{rel.stem}.log")
    blg = _read(aux / f"{rel.stem}.blg")
    if result.exit_code != 0:
        errors = _errors(tree, rel, log) + _bib_errors(rel, blg)
        if not errors:
            tail = result.output.strip().splitlines()[-6:]
            errors = [f"{rel}: latexmk failed (exit {result.exit_code}):", *tail]
        return "\n".join([*errors[:MAX_ERRORS], f"no PDF built: fix {rel} and build again"])
    pdf = rel.with_suffix(".pdf")
    data = NO_LINKS.read_bytes(aux / pdf.name)
    tree.write_atomic(pdf, data)
    output = _OUTPUT.search(log)
    pages = f"{output.group(1)} pages" if output else "? pages"
    lines = [f"built {pdf}: {pages}, {round(len(data) / 1024)} KB, {took:.1f} s"]
    warnings = _citation_warnings(rel, log) + _bib_errors(rel, blg)
    return "\n".join(lines + warnings[:MAX_ERRORS])


def _read(path: Path) -> str:
    try:
        return NO_LINKS.read_text(path, errors="replace")
    except OSError:  # no log: TeX never started (the command's output says why)
        return ""


def _shown(rel: PurePosixPath, name: str) -> str:
    """A file TeX names (relative to the source's folder, or absolute) as the worker sees it."""
    if name.startswith("/"):
        return name
    return (rel.parent / name.removeprefix("./")).as_posix()


def _line_text(tree: Beneath, path: str, line: int) -> str | None:
    try:
        lines = tree.read_text(path, errors="replace").splitlines()
    except (OSError, PathRefused):
        return None
    return lines[line - 1].strip() if 0 < line <= len(lines) else None


def _errors(tree: Beneath, rel: PurePosixPath, log: str) -> list[str]:
    """The log's errors as `file:line: message (line N: "its text")`."""
    found = []
    lines = log.splitlines()
    for i, text in enumerate(lines):
        match = _FILE_LINE.match(text)
        if match is None:
            continue
        name, number, message = match.group("file"), int(match.group("line")), match.group(3)
        message = message.strip().rstrip(".")
        if name.endswith(".bbl"):
            found.append(
                f"{rel.parent / 'references.bib'}: an entry's text breaks LaTeX ({message}, "
                f"line {number} of the bibliography BibTeX made): escape & % _ # $ in it"
            )
            continue
        context = next((_CONTEXT.match(t) for t in lines[i + 1 : i + 8] if _CONTEXT.match(t)), None)
        if message == "Undefined control sequence" and context is not None:
            commands = re.findall(r"\\(?:[A-Za-z@]+|.)", context.group(2))
            message += f" {commands[-1]}" if commands else ""
        shown = _shown(rel, name)
        said = _line_text(tree, shown, number) if not shown.startswith("/") else None
        where = f' (line {number}: "{said}")' if said is not None else ""
        found.append(f"{shown}:{number}: {message}{where}")
    return found


def _citation_warnings(rel: PurePosixPath, log: str) -> list[str]:
    seen: dict[str, str] = {}
    for match in _CITATION.finditer(log):
        seen.setdefault(
            match.group("key"),
            f"{rel}:{match.group(2)}: citation '{match.group('key')}' is undefined "
            "(cite only keys the cite tool wrote to the .bib file)",
        )
    return list(seen.values())


def _bib_errors(rel: PurePosixPath, blg: str) -> list[str]:
    found = []
    for text in blg.splitlines():
        match = _BIB_ERROR.match(text)
        if match is not None:
            where = _shown(rel, match.group("file"))
            found.append(f"{where}:{match.group('line')}: BibTeX: {match.group('what').strip()}")
        elif text.startswith("I couldn't open"):
            found.append(f"{rel}: BibTeX: {text.strip()}")
    return found


def latex_tools(
    root: Path, groups: ProcessGroups, shell_of: Callable[[], WorkerShell]
) -> list[BaseTool]:
    """`build_pdf`; `shell_of` gives, at each call, the shell of the worker whose turn runs."""

    @tool("build_pdf")
    def build(source: str = DEFAULT_SOURCE) -> str:
        """Compile a LaTeX source of the workspace (default paper/paper.tex) to the PDF
        beside it (paper/paper.pdf) with latexmk, which runs BibTeX too. Returns the PDF's
        pages, or the first error with its file and line: fix that line and call again."""
        return build_pdf(root, source, shell_of(), groups)

    return [build]
