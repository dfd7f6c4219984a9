"""Plain-text views that more than one front door prints."""

from __future__ import annotations

from lightscientist_jupyter.controller import DONE, StageTable


def table_text(table: StageTable) -> str:
    """The stage table as aligned text: stage, gate, next, allowed, outputs."""
    rows = [("stage", "gate", "next", "allowed", "outputs")]
    rows += [
        (s.id, "gate" if s.approval else "", s.next, ", ".join(s.allowed), ", ".join(s.outputs))
        for s in table
    ]
    rows.append((DONE, "", "", "", "(end of the project)"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [f"stage table {table.path} · {len(table)} stages + {DONE} · start: {table.start}", ""]
    lines += [
        "  ".join(c.ljust(width) for c, width in zip(r[:4], widths, strict=False)) + "  " + r[4]
        for r in rows
    ]
    return "\n".join(line.rstrip() for line in lines)
