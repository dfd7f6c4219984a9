# paper/build_paper.py imports `paper_revision` by plain name, from beside it in a workspace;
# for the type checker that module is the package's copy.
from lightscientist_jupyter.offline.study.scripts.paper_revision import *  # noqa: F403
