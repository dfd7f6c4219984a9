"""Which bound tool the offline model calls for each need (offline/tools.py), against the tools
a real worker graph binds: every need resolves to the one tool meant, never to a look-alike
(deepagents' `ls`, `glob` and `grep` take a `path` too)."""

from __future__ import annotations

from support.chat_server import answer
from support.runtime import finish, plain_spec

from lightscientist_jupyter.offline import tools
from lightscientist_jupyter.offline.tools import Toolbox

MEANT = {
    "WRITE": "write_file",
    "READ": "read_file",
    "EDIT": "edit_file",
    "RUN": "execute",
    "SUBMIT": "submit_job",
    "COMPLETE": "complete_stage",
    "SEARCH": "search_literature",
    "CITE": "cite",
    "BUILD_PDF": "build_pdf",
    "NOTEBOOK_CREATE": "notebook_create",
    "NOTEBOOK_EDIT": "notebook_edit_cell",
    "NOTEBOOK_RUN": "notebook_run",
    "NOTEBOOK_READ": "notebook_read",
}


def test_each_worker_need_resolves_to_the_tool_meant(chat_server, chat_model, make_runtime):
    chat_server.play(answer("nothing to do"))
    runtime = make_runtime(chat_model, retries=0)
    finish(runtime, runtime.start(plain_spec()))
    toolbox = Toolbox.of(chat_server.requests[0]["tools"])
    assert {"ls", "glob", "grep", "notebook_add_cell", "notebook_delete_cell"} <= set(toolbox.names)
    resolved = {name: toolbox.name_for(getattr(tools, name)) for name in MEANT}
    assert resolved == MEANT
