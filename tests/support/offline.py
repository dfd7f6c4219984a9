"""Helpers of the offline tests: the tools a worker is bound with, and a model bound to them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deepagents.middleware.filesystem import FilesystemMiddleware
from langchain_core.runnables import Runnable

from lightscientist_jupyter.offline.model import OfflineScientistModel
from lightscientist_jupyter.runtime.literature_tools import literature_tools
from lightscientist_jupyter.runtime.session.lifecycle import lifecycle_tools


def worker_tools() -> list[Any]:
    """The tools a LightScientist worker is bound with: deepagents' file and shell tools, the
    lifecycle tools and the literature tools (only their schemas matter to the offline model)."""
    return [*FilesystemMiddleware().tools, *lifecycle_tools(), *literature_tools(Path("."), "")]


def bound_worker(**options: Any) -> Runnable[Any, Any]:
    return OfflineScientistModel(**options).bind_tools(worker_tools())


def reply(model: Runnable[Any, Any], messages: list[Any]) -> Any:
    """The model's answer to `messages` (with the tools it is bound to, if any)."""
    return model.invoke(messages)


def run_second_half(ws: Path, stages: Path | None = None, until: str | None = None) -> Any:
    """The offline project from experiment.setup to the end (or paused after `until`), in
    auto mode, in `ws` (the environment's model unset), with the table `stages` (default:
    the shipped one); returns the `Project`, closed, once its run said done (paused)."""
    from lightscientist_jupyter.app.project import Project

    project = Project.create(
        ws,
        "Does warmup help?",
        mode="auto",
        stage="experiment.setup",
        model="offline",
        stages=stages,
        until=until,
    )
    try:
        assert project.run() == ("paused" if until else "done")
    finally:
        project.close()
    return project
