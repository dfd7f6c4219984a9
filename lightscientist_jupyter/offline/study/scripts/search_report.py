#!/usr/bin/env python3
"""Report the experiment search: the best node against the first draft and the baseline.

Written by LightScientist's offline demo model (see DISCLAIMER in study_design.py). Run from
the workspace root, once the search stage's tree is complete and the study's grid has run:
    python experiment/search_report.py
Reads experiment/tree.json (the search tree layer 1 kept), each node's settings from its
experiment/tree/<node>/result.json, and the baseline from experiment/results.csv (constant-rate
training, warmup 0, at the first draft's learning rate and the study's 300 epochs). Writes
experiment/search.csv (one row per node), experiment/search.json (the numbers the analysis and
the paper quote) and appends a line to experiment/log.md.
"""

from __future__ import annotations

import datetime
import json
import math
import sys
from pathlib import Path
from typing import Any

# Imported modules beside a script leave no __pycache__ in the workspace.
sys.dont_write_bytecode = True
from study_common import condition_name, fmt, read_rows, write_atomic  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENT = ROOT / "experiment"
TREE = EXPERIMENT / "tree.json"
RESULTS = EXPERIMENT / "results.csv"
SEARCH_CSV = EXPERIMENT / "search.csv"
SEARCH_JSON = EXPERIMENT / "search.json"
LOG = EXPERIMENT / "log.md"
SETTINGS = ("lr", "warmup", "schedule", "epochs")
COLUMNS = ["node", "parent", "kind", "status", *SETTINGS, "metric"]


def node_settings(node_id: str) -> dict[str, Any]:
    """The settings a node's result file records ({} when it wrote none)."""
    try:
        raw = json.loads((EXPERIMENT / "tree" / node_id / "result.json").read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    settings = raw.get("settings") if isinstance(raw, dict) else None
    return settings if isinstance(settings, dict) else {}


def baseline(lr: float) -> dict[str, Any] | None:
    """The grid's constant-rate condition at `lr`: its mean final loss over the seeds."""
    condition = condition_name(lr, 0)
    values = [
        float(r["value"])
        for r in read_rows(RESULTS)
        if r.get("condition") == condition and r.get("metric") == "final_loss" and r.get("value")
    ]
    if not values:
        return None
    return {"condition": condition, "final_loss": sum(values) / len(values), "n": len(values)}


def record(node: dict[str, Any]) -> dict[str, Any]:
    return {
        "node": node.get("id"),
        "kind": node.get("kind"),
        "metric": node.get("metric"),
        **node_settings(str(node.get("id"))),
    }


def main() -> int:
    if not TREE.exists():
        print(f"no {TREE}: the search has not run", file=sys.stderr)
        return 1
    tree = json.loads(TREE.read_text(encoding="utf-8"))
    nodes: list[dict[str, Any]] = list(tree.get("nodes") or [])
    metric = str(tree.get("metric") or "final_loss")
    rows = []
    for node in nodes:
        settings = node_settings(str(node.get("id")))
        value = node.get("metric")
        rows.append(
            {
                "node": node.get("id"),
                "parent": node.get("parent") or "",
                "kind": node.get("kind"),
                "status": node.get("status"),
                **{k: settings.get(k, "") for k in SETTINGS},
                "metric": "" if value is None else repr(float(value)),
            }
        )
    lines = [",".join(COLUMNS)]
    lines += [",".join(str(r[c]) for c in COLUMNS) for r in rows]
    write_atomic(SEARCH_CSV, "\n".join(lines) + "\n")

    counts: dict[str, int] = {}
    for node in nodes:
        counts[str(node.get("status"))] = counts.get(str(node.get("status")), 0) + 1
    kinds: dict[str, int] = {}
    for node in nodes:
        kinds[str(node.get("kind"))] = kinds.get(str(node.get("kind")), 0) + 1
    best_id = tree.get("best")
    best = next((n for n in nodes if n.get("id") == best_id), None)
    first = next((n for n in nodes if n.get("kind") == "draft"), None)
    first_rec = record(first) if first else None
    base = baseline(float(first_rec.get("lr", 0.2))) if first_rec else None
    summary: dict[str, Any] = {
        "metric": metric,
        "goal": tree.get("goal"),
        "nodes": len(nodes),
        "counts": counts,
        "kinds": kinds,
        "best": record(best) if best else None,
        "first_draft": first_rec,
        "baseline": base,
    }
    best_value = best.get("metric") if best else None
    first_value = first.get("metric") if first else None
    if isinstance(best_value, int | float) and isinstance(first_value, int | float):
        summary["best_over_first_draft"] = best_value / first_value if first_value else None
    if isinstance(best_value, int | float) and base:
        summary["best_over_baseline"] = best_value / base["final_loss"]
    write_atomic(SEARCH_JSON, json.dumps(summary, indent=2) + "\n")

    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    text = LOG.read_text(encoding="utf-8") if LOG.exists() else "# Experiment log\n\n"
    line = (
        f"- {stamp} · search · {len(nodes)} nodes ("
        + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        + f") · best {best_id}"
        + (f" {metric} {fmt(best_value)}" if isinstance(best_value, int | float) else "")
        + (
            f" · first draft {first.get('id')} {fmt(first_value)}"
            if first and isinstance(first_value, int | float)
            else ""
        )
        + " · experiment/search.csv, experiment/search.json\n"
    )
    write_atomic(LOG, text + ("" if text.endswith("\n") else "\n") + line)
    print(line.strip())
    ok = best is not None and isinstance(best_value, int | float) and math.isfinite(best_value)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
