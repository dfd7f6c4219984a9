"""Which bound tool to call: the offline model picks tools by their parameters, as a model would.

The offline model is never told a tool's name in advance. Each action it plans names a `Need`:
the arguments it will pass (and, where two tools take the same arguments, a word the tool's name
contains). `Toolbox` holds the schemas of the tools bound to the model (`bind_tools`) and
resolves a need to the one bound tool that takes those arguments with the fewest others.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from langchain_core.utils.function_calling import convert_to_openai_tool


@dataclasses.dataclass(frozen=True)
class Need:
    """What the offline model needs a tool for."""

    params: frozenset[str]
    """Argument names the call passes; the tool must accept all of them."""
    word: str = ""
    """A word the tool's name contains, where the arguments alone do not tell tools apart."""

    def __str__(self) -> str:
        args = ", ".join(sorted(self.params)) or "no arguments"
        return f"a tool taking ({args})" + (f" named like '{self.word}'" if self.word else "")


def need(*params: str, word: str = "") -> Need:
    return Need(frozenset(params), word)


# worker needs
WRITE = need("file_path", "content")
READ = need("file_path", word="read")
EDIT = need("file_path", "old_string", "new_string")
"""Replaces one string of a file by another (`edit_file`)."""
RUN = need("command")
ASK = need("question")
SUSPEND = need("reason", "check_after_s")
SUBMIT = need("command", "name", word="submit")
"""Runs a long command as a job (`submit_job`); the worker is resumed when it ends."""
COMPLETE = need("summary", "outputs", "next_stage")
"""Ends a worker's stage (its suggestion) or, bound to the supervisor, the stage itself."""
RECALL = need("query", "k", word="recall")
"""Searches the user's memory and the project's own record (`recall`)."""
SEARCH = need("query", word="search")
"""Searches the literature (`search_literature`)."""
CITE = need("id", word="cite")
"""Cites a record a search returned (`cite`)."""
BUILD_PDF = need("source", word="pdf")
"""Compiles a LaTeX source to the PDF beside it (`build_pdf`)."""
NOTEBOOK_CREATE = need("path", "cells")
"""Writes a new notebook from its cells (`notebook_create`)."""
NOTEBOOK_EDIT = need("path", "cell_id", "source", word="edit")
"""Replaces one notebook cell's source (`notebook_edit_cell`)."""
NOTEBOOK_RUN = need("path", word="notebook_run")
"""Runs a notebook in a fresh kernel in the sandbox and saves its outputs (`notebook_run`)."""
NOTEBOOK_READ = need("path", word="notebook_read")
"""Reads a notebook cell by cell with its outputs (`notebook_read`)."""
STOP = need("notes")
"""The last call of a worker being cancelled."""

# supervisor needs
START = need("instructions")
LIST = need(word="list")
GET = need("worker_id", word="get")
CANCEL = need("worker_id", word="cancel")
ANSWER = need("worker_id", "answer")
SCHEDULE = need("worker_id", "delay_s")


@dataclasses.dataclass(frozen=True)
class Toolbox:
    """The bound tools, as (name, parameter names) pairs in binding order."""

    tools: tuple[tuple[str, frozenset[str]], ...] = ()

    @classmethod
    def of(cls, tools: Sequence[Any]) -> Toolbox:
        found = []
        for tool in tools:
            spec = convert_to_openai_tool(tool)["function"]
            params = frozenset((spec.get("parameters") or {}).get("properties") or {})
            found.append((str(spec["name"]), params))
        return cls(tuple(found))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.tools)

    def name_for(self, want: Need) -> str | None:
        """The bound tool that fits `want` best (fewest extra parameters), or None."""
        fits = [
            (len(params - want.params), i, name)
            for i, (name, params) in enumerate(self.tools)
            if want.params <= params and want.word in name
        ]
        return min(fits)[2] if fits else None
