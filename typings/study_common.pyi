# The offline study's scripts import `study_common` by plain name, from beside them in a
# workspace; for the type checker that module is the package's copy.
from lightscientist_jupyter.offline.study.scripts.study_common import *  # noqa: F403
