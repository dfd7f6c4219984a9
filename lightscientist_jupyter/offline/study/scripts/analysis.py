# %% [markdown] about
# # Analysis of the warmup study
#
# Written by LightScientist's offline demo model, and run by it in a fresh kernel. The cells
# read `results.csv` (every run of the experiment), compute `summary.csv` (n, mean, sample std
# and a 95% t-interval over seeds for every condition and metric), show the summary table and
# the success criterion, and write `analysis.md`. The notebook's folder, `experiment/`, is the
# working directory: run it top to bottom, change a cell, run it again.

# %% load
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # the modules beside the notebook leave no __pycache__
from analysis_report import analysis_text, load_results, summary_csv  # noqa: E402
from IPython.display import Markdown, display  # noqa: E402
from study_common import (  # noqa: E402
    compare_warmup,
    comparison_line,
    criterion,
    read_summary,
    summary_table_rows,
    write_atomic,
)
from study_design import N_RUNS  # noqa: E402

results = load_results(Path("results.csv"))
failed = results.loc[results["status"] != "ok", "run_id"].nunique()
print(f"{results['run_id'].nunique()} of {N_RUNS} planned runs in results.csv, {failed} failed")

# %% summary
summary = summary_csv(results)
write_atomic("summary.csv", summary)
rows = read_summary(summary)
print(f"wrote summary.csv: {len(rows)} rows (condition x metric)")

# %% [markdown] table-note
# The summary table, numbers as the paper prints them (`f"{x:.4g}"`):

# %% table
display(
    Markdown(
        "| condition | metric | n | mean | std | ci95_low | ci95_high |\n"
        "|---|---|---:|---:|---:|---:|---:|\n" + summary_table_rows(rows)
    )
)

# %% criterion
comparisons = compare_warmup(rows)
verdict, why = criterion(comparisons)
for comparison in comparisons:
    print(comparison_line(comparison))
print(f"success criterion met: {verdict} ({why})")

# %% report
write_atomic("analysis.md", analysis_text(results, rows, Path.cwd().parent))
print("wrote analysis.md")
