"""The study kit of the offline scientist: one small, real study, whatever the goal says.

With no API key, LightScientist's offline model drives the real worker agents through the real
stage flow. What it studies is fixed: "Does learning-rate warmup help plain gradient descent
train a small MLP?", on a generated regression dataset with a fixed seed.

- `scripts/` holds the study's scripts as real Python files (package data): the probe, the
  experiment, the analysis, the figure, the paper and its check, plus `study_design.py` (the
  question, the grid, the model and the data) and `study_common.py` (the helpers that read,
  format and judge the numbers), which every script imports and which go beside it;
- `files` reads them for the worker to write into the workspace;
- `idea`, `probes`, `briefs` and `plans` build the Markdown of the other stage outputs, each
  opening with the disclaimer (`text`).

The builders never invent a measured number: they either name the file that holds it or parse
the text of that file given to them, with the same `study_common` helpers the scripts use.
"""
