#!/usr/bin/env python3
"""Figure 1 of the warmup study, from experiment/summary.csv, curves.csv and results.csv.

Written by LightScientist's offline demo model. Run from the workspace root:
    python paper/figures/make_figures.py
Writes paper/figures/figure1.png (150 dpi) and paper/figures/captions.md. No value is typed by
hand: every point, bar and curve is read from the CSV files.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import matplotlib

# Imported modules beside a script leave no __pycache__ in the workspace.
sys.dont_write_bytecode = True
from study_common import (  # noqa: E402
    SummaryRow,
    diverged_count,
    parse_condition,
    read_rows,
    read_summary,
    summary_index,
    write_atomic,
)
from study_design import DISCLAIMER  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

if TYPE_CHECKING:
    from matplotlib.axes import Axes

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = ROOT / "experiment" / "summary.csv"
CURVES = ROOT / "experiment" / "curves.csv"
RESULTS = ROOT / "experiment" / "results.csv"
FIGURES = ROOT / "paper" / "figures"


class Style(TypedDict):
    """How panel (a) draws one warmup length."""

    color: str
    marker: str
    linestyle: str


STYLE: dict[int, Style] = {
    0: dict(color="black", marker="o", linestyle="-"),
    1: dict(color="0.45", marker="s", linestyle="--"),
}
LR_COLORS = ["#9ecae1", "#3182bd", "#08306b", "#6a51a3", "#cb181d"]


def panel_final_loss(ax: Axes, rows: list[SummaryRow]) -> None:
    index = summary_index(rows)
    grid: dict[int, list[tuple[float, SummaryRow]]] = {}
    for r in rows:
        parsed = parse_condition(r["condition"])
        if parsed and r["metric"] == "final_loss":
            grid.setdefault(parsed[1], []).append((parsed[0], r))
    warmups = sorted(grid)
    finite_vals, notes = [], []
    for i, warmup in enumerate(warmups):
        pts = sorted(grid[warmup], key=lambda p: p[0])
        style = STYLE[min(i, 1)]
        shift = 0.93 if i == 0 else 1.07**i
        xs, ys, lo, hi = [], [], [], []
        for lr, r in pts:
            if math.isfinite(r["mean"]) and r["mean"] > 0:
                xs.append(lr * shift)
                ys.append(r["mean"])
                ok = math.isfinite(r["ci95_low"]) and math.isfinite(r["ci95_high"])
                low = max(r["ci95_low"], r["mean"] * 1e-3) if ok else r["mean"]
                lo.append(r["mean"] - low)
                hi.append((r["ci95_high"] - r["mean"]) if ok else 0.0)
                finite_vals += [r["mean"], r["mean"] + hi[-1]]
            else:
                div = diverged_count(index, r["condition"])
                notes.append((lr * shift, style, f"{div}/{r['n']}" if div is not None else "?"))
        label = "constant rate" if warmup == 0 else f"{warmup}-step warmup"
        ax.errorbar(xs, ys, yerr=[lo, hi], capsize=4, label=label, markersize=6, **style)
    ax.set_xscale("log")
    ax.set_yscale("log")
    if finite_vals:
        top = max(finite_vals) * 8
        bottom = min(v for v in finite_vals if v > 0) / 3
        ax.set_ylim(bottom, top)
    for x, style, text in notes:
        ax.plot(
            [x],
            [0.93],
            transform=ax.get_xaxis_transform(),
            marker="x",
            markersize=9,
            color=style["color"],
            linestyle="none",
        )
        ax.text(
            x,
            0.88,
            text,
            transform=ax.get_xaxis_transform(),
            ha="center",
            va="top",
            fontsize=7,
            color=style["color"],
        )
    lrs = sorted({p[0] for pts in grid.values() for p in pts})
    ax.set_xticks(lrs)
    ax.set_xticklabels([f"{lr:g}" for lr in lrs])
    if lrs:
        ax.set_xlim(min(lrs) / 1.6, max(lrs) * 1.6)
    ax.minorticks_off()
    ax.set_xlabel("learning rate (log scale)")
    ax.set_ylabel("mean final training loss, ½·MSE (log scale)")
    ax.set_title("(a) final loss after training, mean ± 95% CI", fontsize=10)
    handles, _ = ax.get_legend_handles_labels()
    if notes:
        handles.append(
            Line2D(
                [],
                [],
                color="0.3",
                marker="x",
                linestyle="none",
                label="mean infinite: runs diverged (k/n)",
            )
        )
    ax.legend(handles=handles, fontsize=8, loc="upper left")


def panel_curves(ax: Axes, curves: list[dict[str, str]], conditions: dict[str, str]) -> None:
    by_run: dict[str, list[tuple[int, float]]] = {}
    for row in curves:
        try:
            by_run.setdefault(row["run_id"], []).append((int(row["step"]), float(row["loss"])))
        except (KeyError, ValueError):
            continue
    parsed = {rid: parse_condition(cond) for rid, cond in conditions.items()}
    lrs = sorted({p[0] for p in parsed.values() if p})
    warmups = sorted({p[1] for p in parsed.values() if p})
    color = {lr: LR_COLORS[i % len(LR_COLORS)] for i, lr in enumerate(lrs)}
    for rid in sorted(by_run):
        p = parsed.get(rid)
        if not p:
            continue
        pts = sorted(by_run[rid])
        fin = [(s, v) for s, v in pts if math.isfinite(v) and v > 0]
        if not fin:
            continue
        ls = "-" if p[1] == 0 else "--"
        ax.plot(
            [s for s, _ in fin],
            [v for _, v in fin],
            color=color[p[0]],
            linestyle=ls,
            linewidth=1.0,
            alpha=0.9,
        )
        if len(fin) < len(pts):  # diverged: mark the last finite point
            ax.plot([fin[-1][0]], [fin[-1][1]], marker="x", color=color[p[0]], markersize=7)
    ax.set_yscale("log")
    ax.set_xlabel("gradient-descent step")
    ax.set_ylabel("training loss, ½·MSE (log scale)")
    ax.set_title("(b) every run, loss every 10 steps (✕ = diverged next)", fontsize=10)
    handles = [Line2D([], [], color=color[lr], label=f"lr={lr:g}") for lr in lrs]
    handles += [
        Line2D(
            [],
            [],
            color="0.3",
            linestyle="-" if w == 0 else "--",
            label="constant" if w == 0 else f"warmup {w}",
        )
        for w in warmups
    ]
    ax.legend(handles=handles, fontsize=7, loc="upper right")


def main() -> int:
    rows = read_summary(SUMMARY.read_text(encoding="utf-8")) if SUMMARY.exists() else []
    if not rows:
        print(f"no usable {SUMMARY}: run experiment/analysis.ipynb first", file=sys.stderr)
        return 1
    FIGURES.mkdir(parents=True, exist_ok=True)
    curves = read_rows(CURVES)
    conditions = {r["run_id"]: r["condition"] for r in read_rows(RESULTS)}
    two = bool(curves and conditions)
    fig, axes = plt.subplots(1, 2 if two else 1, figsize=(11, 4.4) if two else (5.5, 4.4))
    axes = list(axes) if two else [axes]
    panel_final_loss(axes[0], rows)
    if two:
        panel_curves(axes[1], curves, conditions)
    fig.tight_layout()
    out = FIGURES / "figure1.png"
    tmp = FIGURES / ".figure1.tmp.png"
    fig.savefig(tmp, dpi=150)
    plt.close(fig)
    os.replace(tmp, out)

    finals = [r for r in rows if r["metric"] == "final_loss"]
    ns = sorted({r["n"] for r in finals})
    inf_conds = [r["condition"] for r in finals if not math.isfinite(r["mean"])]
    n_runs = len({r for r in conditions}) if conditions else 0
    caption = (
        "(a) Mean final training loss (½·MSE after the last gradient-descent step) against the "
        "learning rate, for constant-rate training (solid, circles) and linear warmup "
        "(dashed, squares); points are shifted slightly left/right to avoid overlap. Error bars "
        f"are 95% t-intervals over seeds (n = {', '.join(map(str, ns))} per point); lower ends "
        "below 1/1000 of the mean are clipped for the log axis. Both axes are logarithmic and the "
        "loss axis does not start at zero. "
        + (
            f"Conditions whose mean is infinite because runs diverged ({', '.join(inf_conds)}) "
            "are marked ✕ near the top with the number of diverged runs out of n. "
            if inf_conds
            else ""
        )
        + (
            f"(b) Training loss every 10 steps for each of the {n_runs} runs: colour gives the "
            "learning rate, solid lines constant rate, dashed lines warmup; a ✕ marks the last "
            "finite loss of a run that diverged in the next recorded step."
            if two
            else ""
        )
    )
    curve_sources = (
        "; experiment/curves.csv (run_id, step, loss) with experiment/results.csv (run_id, "
        "condition)"
    )
    text = f"""# Figure captions

> **Offline demo.** {DISCLAIMER}

## Figure 1

{caption}

- **Source:** experiment/summary.csv (condition, metric = final_loss and diverged, n, mean,
  ci95_low, ci95_high){curve_sources if two else ""}.
- **File:** paper/figures/figure1.png (150 dpi).
- **Regenerate:** `python paper/figures/make_figures.py`
"""
    write_atomic(FIGURES / "captions.md", text)
    print(f"wrote {out} and {FIGURES / 'captions.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
