#!/usr/bin/env python3
"""Write paper/paper.tex (LaTeX) for the warmup study from experiment/summary.csv and
results.csv, citing paper/references.bib and embedding paper/figures/figure1.png.

Written by LightScientist's offline demo model. Run from the workspace root:
    python paper/build_paper.py "<goal text>"
The goal text is only quoted in the disclaimer; the study does not depend on it. The worker
then compiles the source with its build_pdf tool (latexmk and BibTeX) to paper/paper.pdf.

Number format: every number in the paper is fmt(value) = f"{value:.4g}" (4 significant
digits; integers such as n unchanged; `inf`/`nan` as written) applied to the value in
experiment/summary.csv, so paper/check_paper.py can verify each one by formatting again.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# Imported modules beside a script leave no __pycache__ in the workspace.
sys.dont_write_bytecode = True
from paper_revision import requested_changes, response_lines, revision  # noqa: E402
from study_common import (  # noqa: E402
    SummaryRow,
    before_divergence,
    best_condition,
    compare_warmup,
    comparison_line,
    criterion,
    fmt,
    goal_sentence,
    interval,
    read_rows,
    read_summary,
    search_lines,
    verdict_phrase,
    write_atomic,
)
from study_design import (  # noqa: E402
    DESIGN,
    DESIGN_SHORT,
    DISCLAIMER,
    STUDY_QUESTION,
    SUCCESS_CRITERION,
)

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = ROOT / "experiment" / "summary.csv"
RESULTS = ROOT / "experiment" / "results.csv"
CAPTIONS = ROOT / "paper" / "figures" / "captions.md"
PAPER = ROOT / "paper" / "paper.tex"
RESPONSE = ROOT / "paper" / "response.md"
REFERENCES = ROOT / "paper" / "references.bib"
RELATED = {
    "1706.02677": "a gradual warmup made large-minibatch SGD on ImageNet work",
    "1706.03762": "the Transformer is trained with a learning rate that rises linearly at first",
    "1908.03265": "warmup is related to the variance of adaptive learning rates early on",
    "2002.04745": "the need for warmup depends on where layer normalization sits",
    "1810.13243": "warmup is examined among other deep-learning heuristics",
    "1910.04209": "an untuned warmup is studied for adaptive optimisers",
    "1608.03983": "warm restarts reset the learning rate during training",
    "2103.00065": "full-batch gradient descent is observed at the edge of stability",
    "1512.03385": "a small initial learning rate warmed up a very deep residual network",
}
"""What each work of the survey's library is cited for (by arXiv id)."""
Reference = tuple[str, dict[str, str]]
"""An entry of paper/references.bib: its key and its fields."""
TABLE_COLUMNS = ("condition", "metric", "n", "mean", "std", "ci95_low", "ci95_high")
SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "|": "$|$",
    "<": "$<$",
    ">": "$>$",
}
"""LaTeX's special characters, and those its default text font draws as others, as text."""
UNICODE = {
    "\u2081": "$_1$",
    "\u2082": "$_2$",
    "\u00b2": "$^2$",
    "\u00bd": r"$\frac{1}{2}$",
    "\u00b7": r"$\cdot$",
    "\u00d7": r"$\times$",
    "\u00b1": r"$\pm$",
    "\u2212": "$-$",
    "\u221a": r"$\surd$",
    "\u2264": r"$\leq$",
    "\u2265": r"$\geq$",
    "\u2026": r"\ldots{}",
    "\u2014": "---",
    "\u2013": "--",
    "\u2018": "`",
    "\u2019": "'",
    "\u201c": "``",
    "\u201d": "''",
}
"""The characters beyond Latin-1 this study's texts use, as pdflatex typesets them; any other
becomes `?` (pdflatex stops at a character it has no glyph for)."""


def tex(text: str) -> str:
    """`text` as LaTeX text: special characters escaped, symbols typeset."""
    return "".join(SPECIAL.get(c) or UNICODE.get(c) or (c if ord(c) < 256 else "?") for c in text)


def tex_inline(text: str) -> str:
    """A line of the study's Markdown-flavoured text (`**bold**`, `code`) as LaTeX."""
    out = []
    for part in re.split(r"(\*\*.+?\*\*|`[^`]+`)", text):
        if len(part) > 4 and part.startswith("**") and part.endswith("**"):
            out.append(rf"\textbf{{{tex(part[2:-2])}}}")
        elif len(part) > 2 and part.startswith("`") and part.endswith("`"):
            out.append(rf"\texttt{{{tex(part[1:-1])}}}")
        else:
            out.append(tex(part))
    return "".join(out)


def itemize(lines: list[str]) -> str:
    """Markdown bullets as an itemize environment."""
    items = "\n".join(rf"  \item {tex_inline(line.removeprefix('- '))}" for line in lines)
    return f"\\begin{{itemize}}\n{items}\n\\end{{itemize}}"


def figure1_caption() -> str:
    if not CAPTIONS.exists():
        return "Figure 1 (captions.md is missing; run python paper/figures/make_figures.py)."
    text = CAPTIONS.read_text(encoding="utf-8")
    m = re.search(r"^## Figure 1\s*\n+(.*?)(?:\n\s*\n|\Z)", text, re.S | re.M)
    return " ".join(m.group(1).split()) if m else "Figure 1."


def read_references() -> list[Reference]:
    """(key, fields) of each entry of paper/references.bib (the entries `cite` wrote)."""
    if not REFERENCES.exists():
        return []
    text = REFERENCES.read_text(encoding="utf-8")
    entries: list[Reference] = []
    for m in re.finditer(r"@\w+\{([^,\s]+),(.*?)\n\}", text, re.S):
        fields: dict[str, str] = dict(
            re.findall(r"^\s*(\w+)\s*=\s*\{(.*)\},?\s*$", m.group(2), re.M)
        )
        entries.append((m.group(1), fields))
    return entries


def related_work(entries: list[Reference]) -> str:
    if not entries:
        return "No related work was found in the literature searched for this study."
    said = [
        tex(RELATED.get(f.get("eprint", ""), "related work on learning-rate schedules"))
        + rf"~\cite{{{k}}}"
        for k, f in entries
    ]
    return "Related work: " + "; ".join(said) + "."


def bibliography(entries: list[Reference]) -> str:
    """The references BibTeX typesets from paper/references.bib, or a sentence without any
    (BibTeX stops on a document that cites nothing)."""
    if not entries:
        return "\\section*{References}\nNo external works are cited."
    return "\\bibliographystyle{plain}\n\\bibliography{references}"


def results_table(rows: list[SummaryRow]) -> str:
    """Table 1: every row of summary.csv, one row a line, every number through fmt."""
    header = " & ".join(tex(c) for c in TABLE_COLUMNS)
    body = "\n".join(
        f"{tex(r['condition'])} & {tex(r['metric'])} & {fmt(r['n'])} & {fmt(r['mean'])} & "
        f"{fmt(r['std'])} & {fmt(r['ci95_low'])} & {fmt(r['ci95_high'])} \\\\"
        for r in rows
    )
    return f"""\\begin{{table}}[ht]
\\centering
\\caption{{Every row of experiment/summary.csv, its numbers to four significant digits
(Python's format .4g); inf means that at least one run diverged, nan that no interval exists.}}
\\label{{tab:summary}}
\\begin{{tabular}}{{llrrrrr}}
\\toprule
{header} \\\\
\\midrule
{body}
\\bottomrule
\\end{{tabular}}
\\end{{table}}"""


def search_results(lines: list[str]) -> str:
    """The Results paragraph on the experiment search (none when the stage ran no search)."""
    if not lines:
        return ""
    return (
        "Beyond the grid, a best-first search over the study's space (learning rate, "
        "warmup, schedule after the warmup, epochs) ran each variant as a job "
        "(experiment/search.json, experiment/search.csv):\n\n" + itemize(lines) + "\n"
    )


def main(argv: list[str]) -> int:
    goal = " ".join(argv[1:])
    if not SUMMARY.exists():
        print(f"no {SUMMARY}: run experiment/analysis.ipynb first", file=sys.stderr)
        return 1
    rows = read_summary(SUMMARY.read_text(encoding="utf-8"))
    if not rows:
        print(f"{SUMMARY} has no rows", file=sys.stderr)
        return 1
    results = read_rows(RESULTS)
    n_runs = len({r["run_id"] for r in results})
    n_failed = len({r["run_id"] for r in results if r.get("status") != "ok"})
    comps = compare_warmup(rows)
    verdict, why = criterion(comps)
    best = best_condition(rows)
    conditions = list(dict.fromkeys(r["condition"] for r in rows))
    best_text = (
        f"The lowest mean final loss, {interval(best)} (mean [95% CI] over "
        f"{best['n']} seeds), was reached by {best['condition']}."
        if best
        else "No condition reached a finite mean final loss."
    )
    per_lr = []
    for c in comps:
        bd, wd = c["base_div"], c["warm_div"]
        if c["verdict"] == "both diverge":
            per_lr.append(f"At lr={c['lr']:g}, {verdict_phrase(c)}.")
        else:
            div = (
                f" Diverged runs: {bd} without and {wd} with warmup."
                if bd is not None and wd is not None and (bd or wd)
                else ""
            )
            per_lr.append(f"At lr={c['lr']:g}, {verdict_phrase(c)} ({c['reason']}).{div}")
    before = before_divergence(rows, comps)
    abstract = (
        f"We ask whether a linear learning-rate warmup helps plain full-batch gradient descent "
        f"train a small multilayer perceptron. We train {DESIGN_SHORT}, and compare each warmup "
        f"condition with constant-rate training at the same learning rate, using the final "
        f"training loss and the number of diverged runs. {best_text} "
        + " ".join(per_lr)
        + f" The success criterion, fixed before the runs, was {verdict}. The study is tiny (three "
        "seeds, one synthetic task), so these results describe this setting only."
    )
    refs = read_references()
    changes = requested_changes()  # the reviewers sent the paper back: make their changes
    revised_results, revised_limits, done = revision(changes, tex)
    scope = f"  \\item {tex(revised_limits)}\n" if revised_limits else ""
    no_divergence = "No run diverged, so best_loss adds nothing beyond final_loss here."
    paper = rf"""\documentclass[11pt]{{article}}
\usepackage[margin=2.5cm]{{geometry}}
\usepackage{{graphicx}}
\usepackage{{booktabs}}
\usepackage{{amsmath}}
% the math font's bullet: the text one is drawn from a bitmap font made at build time
\renewcommand{{\labelitemi}}{{$\bullet$}}
\title{{Learning-rate warmup for plain gradient descent on a small MLP}}
\author{{LightScientist (offline demo model)}}
\date{{}}
\begin{{document}}
\maketitle

\noindent\textbf{{Offline demo.}} {tex(DISCLAIMER)}{tex(goal_sentence(goal))}

\begin{{abstract}}
{tex(abstract)}
\end{{abstract}}

\section{{Introduction}}
Learning-rate warmup, which starts training with a small step size and increases it to its
target over the first steps, is commonly used to stabilise the early phase of training. This
report asks whether it does anything for the simplest case: full-batch gradient descent on a
tiny network, where the only source of instability is the step size itself. Question:
{tex(STUDY_QUESTION)} Claims, limited to what experiment/brief.md approved: (1) whether the
success criterion fixed before the experiment was met; (2) which condition reached the lowest
mean final loss; (3) how warmup compared with constant-rate training at each learning rate.
{related_work(refs)}

\section{{Method}}
A 2-16-1 multilayer perceptron (tanh hidden units, linear output; $W_1 \sim N(0, 1)$,
$W_2 \sim N(0, 1/16)$, zero biases, drawn with the run's seed) is trained by full-batch
gradient descent to minimise $\frac{{1}}{{2}}$ mean squared error. With warmup length $w > 0$,
the step size at step $t$ (counting from 0) is $\mathrm{{lr}} \cdot \min(1, (t+1)/w)$; with
$w = 0$ it is lr throughout. A run diverges when the loss becomes nan or inf or exceeds
$10^6$; it then stops and its final loss is recorded as inf.

\section{{Experimental setup}}
Design: {tex(DESIGN)}. Metrics per run: final\_loss (loss after the last step), best\_loss
(lowest loss seen) and diverged (0/1). Per condition we report n, mean, sample standard
deviation and a 95\% t-interval over seeds (mean $\pm\, t \cdot \mathrm{{std}}/\sqrt{{n}}$,
$t$ the quantile of Student's $t$ with $n-1$ degrees of freedom at
0.975, % not measured
from a table: 4.303 for $n = 3$). % not measured
Warmup helps at a learning rate only by the criterion fixed before the runs:
{tex(SUCCESS_CRITERION)}

\section{{Results}}
Table~\ref{{tab:summary}} lists every row of experiment/summary.csv, and
Figure~\ref{{fig:loss}} shows the runs.

{results_table(rows)}

\begin{{figure}}[ht]
\centering
\includegraphics[width=0.85\linewidth]{{figures/figure1.png}}
\caption{{{tex(figure1_caption())}}}
\label{{fig:loss}}
\end{{figure}}

{tex(best_text)} Warmup against constant rate at each learning rate (final\_loss mean [95\%
CI]):

{itemize([comparison_line(c) for c in comps])}

{tex(" ".join(before) or no_divergence)}

\textbf{{Success criterion: {tex(verdict)}}} --- {tex(why)}. Data: {n_runs} runs in
experiment/results.csv, {n_failed} failed, {len(conditions)} conditions.

{search_results(search_lines(ROOT / "experiment" / "search.json"))}
{revised_results}
\section{{Limitations}}
\begin{{itemize}}
  \item Three seeds per condition; the intervals are wide and a small effect would be missed.
  \item One generated task, one 2-16-1 network, one warmup length, training loss only (no
  held-out data), full-batch gradient descent only.
  \item At stable learning rates warmup takes smaller early steps, so with a fixed budget a
  slightly higher loss can reflect the smaller total step rather than stability.
  \item Divergence is defined by a threshold ($10^6$ or nan/inf); a run oscillating below it
  counts as not diverged.
  \item The study was chosen and run by LightScientist's offline demo model, independently of
  the project's goal text.
{scope}\end{{itemize}}

\section{{Reproducibility}}
From the workspace root, with numpy, pandas and matplotlib installed:
{{\small
\begin{{verbatim}}
python experiment/run_experiment.py     # experiment/results.csv, curves.csv, log.md
jupyter execute --inplace experiment/analysis.ipynb  # summary.csv, analysis.md
python paper/figures/make_figures.py    # paper/figures/figure1.png, captions.md
python paper/build_paper.py "<goal>"    # paper/paper.tex (this paper's source)
python paper/check_paper.py             # paper/review.md
\end{{verbatim}}
}}
\noindent The worker's build\_pdf tool compiles paper/paper.tex to paper/paper.pdf with latexmk.
Every run is deterministic (fixed data seed and weight seeds; no clock or network).

{bibliography(refs)}
\end{{document}}
"""
    write_atomic(PAPER, paper)
    if done:
        response = "# Response to the reviewers\n\n" + "\n".join(response_lines(done)) + "\n"
        write_atomic(RESPONSE, response)
    revised = f"; revised for {len(done)} requested changes (paper/response.md)" if done else ""
    print(f"wrote {PAPER}: {len(rows)} table rows; criterion {verdict}{revised}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
