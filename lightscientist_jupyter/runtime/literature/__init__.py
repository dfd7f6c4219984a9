"""Literature for workers: sources, records, the cache and the `search_literature`, `get_paper`
and `cite` tools (see `service` and `tools`)."""

from lightscientist_jupyter.runtime.literature.config import LiteratureConfig
from lightscientist_jupyter.runtime.literature.records import Paper
from lightscientist_jupyter.runtime.literature.service import Literature
from lightscientist_jupyter.runtime.literature.tools import literature_tools

__all__ = ["Literature", "LiteratureConfig", "Paper", "literature_tools"]
