"""One search node shown in a notebook (`%lightscientist tree --node`, the dashboard's search
card): its kind, status and metric, its summary, each file it changed against its parent
(drawn as the gate's diff card draws a file: a unified diff, a CSV's changed rows, an image
before and after), and the end of its job's log. The text form is the command line's."""

from __future__ import annotations

import html

from lightscientist_jupyter.app.search_node import NodeDetail, detail_lines, files_line
from lightscientist_jupyter.jupyter import diff_card


def render_html(detail: NodeDetail) -> str:
    node = detail.node
    metric = "" if node.metric is None else f" · metric {node.metric:g}"
    head = (
        f"<b>node {html.escape(node.id)}</b> — {html.escape(str(node.kind))}, "
        f"{html.escape(str(node.status))}{html.escape(metric)}"
    )
    parts = [f'<div class="ls-node-card" data-node="{html.escape(node.id)}">', f"<div>{head}</div>"]
    if node.summary:
        parts.append(f'<div class="ls-node-summary">{html.escape(node.summary)}</div>')
    parts.append(f'<div class="ls-muted">{html.escape(files_line(detail))}</div>')
    parts += [diff_card.render(diff_card.file_diff(c, images=True)) for c in detail.changes]
    if detail.log is None:
        parts.append('<div class="ls-muted">the node ran no job</div>')
    else:
        label = html.escape(f"end of {detail.log}", quote=True)
        tail = html.escape("\n".join(detail.log_tail)) or "(empty)"
        parts.append(
            f"<div>log <code>{html.escape(detail.log)}</code> (last {len(detail.log_tail)} "
            f'lines)</div><pre class="ls-node-log" tabindex="0" aria-label="{label}">{tail}</pre>'
        )
    parts.append("</div>")
    return "".join(parts)


class NodeCard:
    """A node for display: the card in a notebook, the command line's text as plain form."""

    def __init__(self, detail: NodeDetail):
        self.detail = detail

    def _repr_html_(self) -> str:
        return render_html(self.detail)

    def __repr__(self) -> str:
        return "\n".join(detail_lines(self.detail))
