"""Fixtures of the offline scientist's tests: real runtimes with the offline model, real
workspaces, and the offline study's scripts copied where a project puts them."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# The layer-3 helpers (stage tasks, `finish`, checkpoints) live with the runtime tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))

from runtime_support import Updates, stage_spec  # noqa: E402

from lightscientist_jupyter.controller import StageTable, load_table  # noqa: E402
from lightscientist_jupyter.runtime.models import resolve_model  # noqa: E402
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime  # noqa: E402
from lightscientist_jupyter.runtime.types import WorkerSpec  # noqa: E402
from lightscientist_jupyter.workspace import Workspace  # noqa: E402


@pytest.fixture
def updates() -> Updates:
    return Updates()


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace.at(root)


@pytest.fixture
def make_runtime(ws: Workspace, updates: Updates) -> Iterator[Callable[..., ExecutionRuntime]]:
    """`make_runtime(model=None)`: an `ExecutionRuntime` on `ws` with the offline model and
    SQLite checkpoints, reporting to `updates`; closed at the end."""
    made: list[ExecutionRuntime] = []

    def make(model: Any = None) -> ExecutionRuntime:
        runtime = ExecutionRuntime(
            ws,
            model if model is not None else resolve_model("offline"),
            checkpointer="sqlite",
            on_update=updates,
        )
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        runtime.close()


@pytest.fixture(scope="session")
def table() -> StageTable:
    return load_table()


@pytest.fixture
def spec_for(table: StageTable, ws: Workspace) -> Callable[..., WorkerSpec]:
    """`spec_for(stage, visit=1)`: the worker spec layer 2 hands down for a default stage."""
    return lambda stage, visit=1: stage_spec(table, ws, stage, visit)
