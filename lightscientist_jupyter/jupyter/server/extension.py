"""The Jupyter server extension behind the LightScientist side panel.

Everything it answers is read from disk — `.lightscientist/state.json`, `events.jsonl`,
`PROCESS.md`, the stage outputs — so the panel works without a kernel and after a page
reload. The handlers are authenticated `APIHandler`s (POST keeps Jupyter's XSRF check) that
run the functions of `data` on a worker thread and write their answer or refusal:

    GET  /lightscientist/projects
    GET  /lightscientist/project?path=REL
    GET  /lightscientist/events?path=REL&after=SEQ&limit=N
    GET  /lightscientist/file?path=REL&name=NAME
    POST /lightscientist/reply  {"path", "approve", "comment", "to_stage", "decision_id",
                                 "budget" (at a budget decision: {"tokens": N} or "usd=…")}
                                or a hand-over step {"path", "handoff", …} (handoff)
    POST /lightscientist/control  {"path", "action", "stage"}  (control: run controls)
    POST /lightscientist/open-notebooks  {"page", "paths"}  (open_pages: the page's open
                                notebooks; answers with the changes it is to apply)
    POST /lightscientist/notebook-change  {"project", "id", "outcome", "detail"}
    POST /lightscientist/defaults  {"model", "mode", "budget"}  (defaults: the Settings
                                Editor's, kept for the kernels)
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tornado.web
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado.ioloop import IOLoop

from lightscientist_jupyter.jupyter.server import handoff as server_handoff
from lightscientist_jupyter.jupyter.server.answers import (
    Answer,
    HandoffAnswer,
    Refusal,
    ReplyAnswer,
)
from lightscientist_jupyter.jupyter.server.control import control
from lightscientist_jupyter.jupyter.server.data import (
    list_projects,
    project_detail,
    project_events,
    project_file,
    project_reply,
)
from lightscientist_jupyter.jupyter.server.defaults import save_defaults
from lightscientist_jupyter.jupyter.server.open_pages import notebook_change, open_notebooks
from lightscientist_jupyter.jupyter.server.paths import Refused
from lightscientist_jupyter.jupyter.server.search import project_node

AUTH_RESOURCE = "lightscientist"


# ------------------------------------------------------------------------- handlers


class _Handler(APIHandler):
    auth_resource = AUTH_RESOURCE

    @property
    def server_root(self) -> Path:
        root = self.settings.get("server_root_dir") or self.contents_manager.root_dir
        return Path(os.path.realpath(os.path.expanduser(root)))

    async def answer(self, work: Callable[..., Answer], *args: Any) -> None:
        """Run `work(root, *args)` on a worker thread; write its answer or its refusal."""
        body: Answer | Refusal
        try:
            body = await IOLoop.current().run_in_executor(None, work, self.server_root, *args)
        except Refused as exc:
            self.log.info(
                "lightscientist: %s %s refused (%d): %s",
                self.request.method,
                self.request.path,
                exc.status,
                exc.message,
            )
            self.set_status(exc.status)
            body = {"message": exc.message, "status": exc.status}
        self.finish(json.dumps(body, ensure_ascii=False, default=str))

    def arg(self, name: str) -> str | None:
        return self.get_query_argument(name, None)

    def json_body(self) -> Any:
        """The request's JSON body (None when it is not JSON)."""
        try:
            return json.loads(self.request.body or b"null")
        except ValueError:
            return None


class ProjectsHandler(_Handler):
    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        await self.answer(list_projects)


class ProjectHandler(_Handler):
    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        await self.answer(project_detail, self.arg("path") or "")


class EventsHandler(_Handler):
    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        await self.answer(
            project_events, self.arg("path") or "", self.arg("after"), self.arg("limit")
        )


class FileHandler(_Handler):
    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        await self.answer(project_file, self.arg("path") or "", self.arg("name"))


class NodeHandler(_Handler):
    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        await self.answer(project_node, self.arg("path") or "", self.arg("node"))


def reply(root: Path, body: Any) -> ReplyAnswer | HandoffAnswer:
    """The reply endpoint: a hand-over step (take / deliver / give-back) or an approve/reject."""
    if isinstance(body, dict) and body.get("handoff"):
        return server_handoff.reply(root, body)
    return project_reply(root, body)


class ReplyHandler(_Handler):
    @tornado.web.authenticated
    @authorized
    async def post(self) -> None:
        await self.answer(reply, self.json_body())


class ControlHandler(_Handler):
    @tornado.web.authenticated
    @authorized
    async def post(self) -> None:
        await self.answer(control, self.json_body())


class OpenNotebooksHandler(_Handler):
    @tornado.web.authenticated
    @authorized
    async def post(self) -> None:
        await self.answer(open_notebooks, self.json_body())


class NotebookChangeHandler(_Handler):
    @tornado.web.authenticated
    @authorized
    async def post(self) -> None:
        await self.answer(notebook_change, self.json_body())


class DefaultsHandler(_Handler):
    @tornado.web.authenticated
    @authorized
    async def post(self) -> None:
        await self.answer(save_defaults, self.json_body())


ROUTES = (
    ("projects", ProjectsHandler),
    ("project", ProjectHandler),
    ("events", EventsHandler),
    ("file", FileHandler),
    ("node", NodeHandler),
    ("reply", ReplyHandler),
    ("control", ControlHandler),
    ("open-notebooks", OpenNotebooksHandler),
    ("notebook-change", NotebookChangeHandler),
    ("defaults", DefaultsHandler),
)


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Register the handlers under `<base_url>/lightscientist/`."""
    base = serverapp.web_app.settings["base_url"]
    serverapp.web_app.add_handlers(
        ".*$", [(url_path_join(base, AUTH_RESOURCE, name), handler) for name, handler in ROUTES]
    )
    names = ",".join(name for name, _ in ROUTES)
    serverapp.log.info(
        "LightScientist server extension: %s", url_path_join(base, AUTH_RESOURCE, "{" + names + "}")
    )
