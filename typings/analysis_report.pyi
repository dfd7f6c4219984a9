# experiment/analysis.ipynb imports `analysis_report` by plain name, from beside it in a
# workspace; for the type checker that module is the package's copy.
from lightscientist_jupyter.offline.study.scripts.analysis_report import *  # noqa: F403
