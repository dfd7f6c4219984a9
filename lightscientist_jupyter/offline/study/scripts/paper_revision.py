"""The changes the reviewers asked for, as LaTeX the paper's build adds when it revises.

Written by LightScientist's offline demo model (see DISCLAIMER in study_design.py), beside
paper/build_paper.py, which imports it. When paper/reviews/meta.json (written by the review
stage's layer 1) sends the paper back (`"decision": "revise"`), its `required_changes` are
read, and each change this demo knows how to make is made from the result files:
- an ablation over the search: a table of every node of experiment/search.csv (its kind,
  parent, settings and metric, each number formatted by fmt() from that file);
- the study's reach: a limitation saying it used a single generated dataset.
A change it does not know is listed as not addressed, never claimed. `response_lines` says
what was done for each, for paper/response.md.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

from study_common import fmt

ROOT = Path(__file__).resolve().parent.parent
META = ROOT / "paper" / "reviews" / "meta.json"
SEARCH_CSV = ROOT / "experiment" / "search.csv"
SETTINGS = ("lr", "warmup", "schedule", "epochs")


def requested_changes(meta_path: Path = META) -> list[str]:
    """The changes the last review round asks for ([] without a revision to make)."""
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(meta, dict) or meta.get("decision") != "revise":
        return []
    return [str(c) for c in meta.get("required_changes") or [] if str(c).strip()]


def ablation_table(tex: Callable[[str], str], path: Path = SEARCH_CSV) -> str | None:
    """A LaTeX table of the search's nodes from experiment/search.csv (None without it);
    `tex` escapes a cell's text (the paper's own escaping)."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError:
        return None
    if not rows:
        return None
    lines = []
    for row in rows:
        metric = row.get("metric") or ""
        cells = [
            row.get("node") or "",
            row.get("kind") or "",
            row.get("parent") or "--",
            row.get("status") or "",
            *(_cell(row.get(key) or "") for key in SETTINGS),
            fmt(float(metric)) if metric else "--",
        ]
        lines.append(" & ".join(tex(c) for c in cells) + r" \\")
    header = " & ".join(
        ["node", "kind", "parent", "status", "lr", "warmup", "schedule", "epochs", "final loss"]
    )
    body = "\n".join(lines)
    return rf"""\subsection{{Ablation over the search's variants}}
Table~\ref{{tab:ablation}} lists every node of the search: what it is, the node it grew from,
its settings and the final loss its job wrote (a failed node has none). An improvement changes
one setting of its parent, so the change in final loss between a node and its parent is the
effect of that one setting.

\begin{{table}}[ht]
\centering
\small
\begin{{tabular}}{{llllrrlrr}}
\toprule
{header} \\
\midrule
{body}
\bottomrule
\end{{tabular}}
\caption{{Every node of the experiment search (experiment/search.csv).}}
\label{{tab:ablation}}
\end{{table}}
"""


def _cell(value: str) -> str:
    try:
        return fmt(float(value))
    except ValueError:
        return value


SCOPE = (
    "The study used a single generated dataset (one data seed) and one small network: the "
    "finding on warmup is evidence for this setting, and how far it reaches to other data, "
    "other architectures and adaptive optimisers is untested here."
)


def revision(
    changes: list[str], tex: Callable[[str], str]
) -> tuple[str, str, list[tuple[str, str]]]:
    """(LaTeX for the results, text for the limitations, (change, what was done) for each
    requested change); `tex` escapes text for LaTeX."""
    results, limits, done = "", "", []
    for change in changes:
        lowered = change.lower()
        if "ablation" in lowered and not results:
            table = ablation_table(tex)
            results = table or ""
            what = (
                "added Table (ablation) of every search node from experiment/search.csv"
                if table
                else "not addressed: experiment/search.csv is missing"
            )
        elif ("single generated dataset" in lowered or "how far" in lowered) and not limits:
            limits = SCOPE
            what = "added the study's reach to the limitations"
        else:
            what = "not addressed: the offline demo model does not know how to make this change"
        done.append((change, what))
    return results, limits, done


def response_lines(done: list[tuple[str, str]]) -> list[str]:
    """paper/response.md's list: each requested change and what the revision did."""
    return [f"- **Asked:** {change}\n  **Done:** {what}." for change, what in done]
