"""The prose of a LaTeX source, line by line, for the provenance checks (`provenance`).

What a reader of the PDF reads as claims is the document's body: between `\\begin{document}`
and `\\end{document}` (a source without them, a section pulled in by `\\input`, is all body),
without comments (an unescaped `%` to the end of its line; `\\%` is a percent sign), verbatim
and listing environments, or the bibliography. The lines keep their numbers in the source, so
that a check names the line to fix. `numbers_only` then blanks what holds no measured number:
a command's options (`[width=0.8\\linewidth]`) and the arguments of commands that name files,
labels, addresses or lengths.
"""

from __future__ import annotations

import re

_COMMENT = re.compile(r"(?<!\\)((?:\\\\)*)%")
"""An unescaped `%`: preceded by an even number of backslashes (none, `\\\\` a line break)."""
_SKIPPED_ENVIRONMENTS = ("verbatim", "lstlisting", "minted", "comment", "thebibliography")
_BEGIN = re.compile(r"\\begin\{(" + "|".join(_SKIPPED_ENVIRONMENTS) + r")\*?\}")
_VERB = re.compile(r"\\verb\*?(.).*?\1")
_OPTIONS = re.compile(r"(\\[A-Za-z@]+\*?(?:\{[^{}]*\})*|\\\\\*?)\s*\[[^\]]*\]")
"""A command's options, after its name and any braced arguments (`\\begin{figure}[t]`), and
the spacing of a line break (`\\\\[2pt]`)."""
_NAMING_COMMANDS = (
    "label",
    "ref",
    "eqref",
    "pageref",
    "cref",
    "Cref",
    "autoref",
    "includegraphics",
    "input",
    "include",
    "bibliography",
    "bibliographystyle",
    "url",
    "href",
    "usepackage",
    "documentclass",
    "vspace",
    "hspace",
    "graphicspath",
    "setlength",
)
_NAMING = re.compile(r"\\(?:" + "|".join(_NAMING_COMMANDS) + r")\*?\s*\{[^{}]*\}")


def _split_comment(line: str) -> tuple[str, str]:
    """The line's text before its comment, and the comment's text."""
    match = _COMMENT.search(line)
    if match is None:
        return line, ""
    cut = match.start() + len(match.group(1))
    return line[:cut], line[cut + 1 :]


def latex_lines(text: str) -> list[tuple[int, str, str]]:
    """(line number, text without its comment, the comment's text) of each line of the body
    outside the skipped environments."""
    lines = text.splitlines()
    bodies = [_split_comment(line) for line in lines]
    has_body = any("\\begin{document}" in code for code, _ in bodies)
    inside = not has_body
    skipping: str | None = None
    found = []
    for number, (code, comment) in enumerate(bodies, start=1):
        if not inside:
            inside = "\\begin{document}" in code
            continue
        if "\\end{document}" in code:
            break
        if skipping is not None:
            if f"\\end{{{skipping}}}" in code or f"\\end{{{skipping}*}}" in code:
                skipping = None
            continue
        begun = _BEGIN.search(code)
        if begun is not None:
            closed = f"\\end{{{begun.group(1)}" in code[begun.end() :]
            skipping = None if closed else begun.group(1)
            code = code[: begun.start()]
        found.append((number, code, comment.strip()))
    return found


def numbers_only(code: str) -> str:
    """`code` with what holds no measured number blanked (the same length), and `\\%` read as
    the percent sign it prints (`12.5\\%` is 12.5 %)."""
    for pattern in (_VERB, _OPTIONS, _NAMING):
        code = pattern.sub(lambda m: " " * len(m.group(0)), code)
    return code.replace("\\%", "%")
