"""Plain-text views that more than one front door prints."""

from __future__ import annotations

import shlex

from lightscientist_jupyter.controller import DONE, StageTable


def table_text(table: StageTable) -> str:
    """The stage table as aligned text: stage, gate, next, allowed, outputs; with an `agent`
    column and a line per agent (its command, policy and the stages it works) when the table
    declares coding agents."""
    agents = bool(table.agents)
    head = ("stage", "gate", *(("agent",) if agents else ()), "next", "allowed", "outputs")
    rows = [head]
    for s in table:
        agent = (s.agent or "",) if agents else ()
        gate = "gate" if s.approval else ""
        rows.append((s.id, gate, *agent, s.next, ", ".join(s.allowed), ", ".join(s.outputs)))
    rows.append((DONE, *[""] * (len(head) - 2), "(end of the project)"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
    lines = [f"stage table {table.path} · {len(table)} stages + {DONE} · start: {table.start}", ""]
    lines += [
        "  ".join(c.ljust(width) for c, width in zip(r[:-1], widths, strict=True)) + "  " + r[-1]
        for r in rows
    ]
    if agents:
        lines += ["", "agents:"]
    for a in table.agents.values():
        works = ", ".join(table.works(a.name)) or "no stage"
        env = ", ".join(a.env) or "none"
        lines.append(
            f"  {a.name}: {shlex.join(a.command)} · env {env} · permissions {a.permissions} · "
            f"network {'on' if a.network else 'off'} · works {works}"
        )
    return "\n".join(line.rstrip() for line in lines)
