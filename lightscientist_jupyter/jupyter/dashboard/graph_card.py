"""The dashboard's stage graph: the side panel's drawing (`labextension/src/graph.ts`), fed
the same view (`jupyter/graph_view.py`) through one synced trait.

Its front end is `labextension/src/widgets/graph.ts`: it draws the view at each of its widths
and shows the widest that fits the dashboard, again when the notebook is resized. A saved
notebook keeps the static copy `graph.render_svg` draws of the same view.
"""

from __future__ import annotations

import anywidget
import traitlets

from lightscientist_jupyter.jupyter.dashboard.widgets import THEME_CSS, esm


class StageGraph(anywidget.AnyWidget):
    """The stage graph of one project, as `view` says (`graph_view.GraphView`)."""

    _esm = esm("graph")
    _css = THEME_CSS

    view = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    """The graph to draw (`GraphView`); None before the table is read."""
