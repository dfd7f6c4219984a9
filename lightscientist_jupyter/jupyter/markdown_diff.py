"""A Markdown file's change drawn as the reader sees it: the new text rendered, with what was
inserted marked `<ins>` and what was deleted kept in place as `<del>`.

The two versions are compared line by line, and a changed line with its counterpart word by
word. Marks are private-use characters while the text is Markdown, so the Markdown renderer
(mistune, with every raw HTML of the file escaped and unsafe link schemes dropped) never sees
a tag of ours it could escape or a tag of the file it could keep; they become `<ins>` and
`<del>` in its HTML output only. A line's block syntax (a heading's `#`, a list's bullet, a
quote's `>`) stays outside the marks, and a table row is marked cell by cell, so the
document keeps its shape. Only the blocks (paragraphs, lists, tables, code) that changed are
drawn, each with the block before it (its heading, most often); an ellipsis stands for the
blocks left out, so a long log's new entry is what shows. HTML comments, invisible in a
rendered file, are left out too. Where the Markdown's inline syntax straddles a change the
drawing may be rough: the source diff stays one click away on both screens.
"""

from __future__ import annotations

import difflib
import functools
import re

import mistune

INS, INS_END, DEL, DEL_END = "\ue000", "\ue001", "\ue002", "\ue003"
MARKS = {INS: "<ins>", INS_END: "</ins>", DEL: "<del>", DEL_END: "</del>"}
MAX_LINES = 3000
"""A longer file is not rendered (its source diff is)."""
WORD_DIFF_AT_LEAST = 0.4
"""A changed line is marked word by word when at least this share of its words stayed;
else the old line is shown deleted and the new one inserted."""

_BLOCK = re.compile(r"^(\s*(?:#{1,6}\s+|[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+|>\s?)*)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_TOKENS = re.compile(r"\s+|[^\s]+")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_FENCE = re.compile(r"^\s*(```|~~~)")
SKIPPED = "…"
"""What stands for the unchanged blocks left out."""
_RENDER = mistune.create_markdown(escape=True, plugins=["table", "strikethrough", "url"])


@functools.lru_cache(maxsize=32)
def rendered_diff(old: str, new: str) -> str | None:
    """The HTML of `new` with the change from `old` marked, or None when too long to draw.
    Kept for the same two texts: the panel asks for a gate's detail every second, and a long
    PROCESS.md takes tens of milliseconds to draw."""
    old_lines, new_lines = _clean(old).splitlines(), _clean(new).splitlines()
    if max(len(old_lines), len(new_lines)) > MAX_LINES:
        return None
    html = str(_RENDER("\n".join(changed_blocks(merged(old_lines, new_lines))) + "\n"))
    for mark, tag in MARKS.items():
        html = html.replace(mark, tag)
    return html


def merged(old: list[str], new: list[str]) -> list[str]:
    """The lines of `new` with the change from `old` marked (as Markdown, marks as
    private-use characters)."""
    out: list[str] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += new[j1:j2]
        elif tag == "insert":
            out += [_whole(line, INS, INS_END) for line in new[j1:j2]]
        elif tag == "delete":
            out += [_whole(line, DEL, DEL_END) for line in old[i1:i2]]
        else:
            out += _replaced(old[i1:i2], new[j1:j2])
    return out


def changed_blocks(lines: list[str]) -> list[str]:
    """The blocks of `lines` holding a mark, each with the block before it; `SKIPPED` for
    each run of blocks left out. A block is a run of lines between blank lines, a fenced code
    block whole (blank lines inside it included)."""
    blocks: list[list[str]] = [[]]
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
        if not line.strip() and not fenced:
            if blocks[-1]:
                blocks.append([])
            continue
        blocks[-1].append(line)
    blocks = [b for b in blocks if b]
    marked = [any(m in line for line in b for m in (INS, DEL)) for b in blocks]
    keep = [marked[i] or (i + 1 < len(blocks) and marked[i + 1]) for i in range(len(blocks))]
    out: list[str] = []
    for block, kept in zip(blocks, keep, strict=True):
        if kept:
            out += [*block, ""]
        elif not out or out[-2:] != [SKIPPED, ""]:
            out += [SKIPPED, ""]
    return out


def _replaced(old: list[str], new: list[str]) -> list[str]:
    """Lines that changed, paired in order: word by word where they still look alike."""
    out: list[str] = []
    for k in range(max(len(old), len(new))):
        before = old[k] if k < len(old) else None
        after = new[k] if k < len(new) else None
        if before is None:
            out.append(_whole(after or "", INS, INS_END))
        elif after is None:
            out.append(_whole(before, DEL, DEL_END))
        elif (words := _words(before, after)) is not None:
            out.append(words)
        else:
            out += [_whole(before, DEL, DEL_END), _whole(after, INS, INS_END)]
    return out


def _words(before: str, after: str) -> str | None:
    """`after` with its words changed from `before` marked, or None when the two lines share
    too little (or their block syntax differs, or they are table rows)."""
    prefix = _BLOCK.match(after)
    head = prefix.group(1) if prefix else ""
    if not before.startswith(head) or _is_row(after) or _is_row(before):
        return None
    a, b = _TOKENS.findall(before[len(head) :]), _TOKENS.findall(after[len(head) :])
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    if matcher.ratio() < WORD_DIFF_AT_LEAST:
        return None
    parts = [head]
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            parts += b[j1:j2]
            continue
        gone, came = "".join(a[i1:i2]), "".join(b[j1:j2])
        if gone.strip():
            parts.append(f"{DEL}{gone}{DEL_END}")
        if came.strip():
            parts.append(f"{INS}{came}{INS_END}")
        elif came:
            parts.append(came)  # whitespace that came stays whitespace
    return "".join(parts)


def _whole(line: str, start: str, end: str) -> str:
    """`line` marked whole: its block syntax outside the marks, a table row cell by cell."""
    if not line.strip() or _TABLE_RULE.match(line):
        return line
    if _is_row(line):
        cells = line.split("|")
        return "|".join(f"{start}{c}{end}" if c.strip() else c for c in cells)
    prefix = _BLOCK.match(line)
    head = prefix.group(1) if prefix else ""
    rest = line[len(head) :]
    return f"{head}{start}{rest}{end}" if rest.strip() else line


def _is_row(line: str) -> bool:
    return line.lstrip().startswith("|")


def _clean(text: str) -> str:
    """`text` without its HTML comments and the private-use characters marks are made of."""
    return _COMMENT.sub("", text.translate({ord(mark): None for mark in MARKS}))
