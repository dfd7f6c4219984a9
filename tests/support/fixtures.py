"""Fixtures shared by the layer-3 and offline-scientist tests (a pytest plugin, registered in
tests/conftest.py): real runtimes on real workspaces, and the one stand-in, the model — the
offline model, or the real `ChatOpenAI` client against the local server of
`support.chat_server`."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lightscientist_jupyter.controller import StageTable, load_table
from lightscientist_jupyter.runtime.latex_tools import missing_toolchain
from lightscientist_jupyter.runtime.models.resolver import resolve_model
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.runtime.sandbox import bwrap
from lightscientist_jupyter.runtime.types import WorkerSpec
from lightscientist_jupyter.workspace import Workspace
from support.chat_server import ChatServer
from support.outside_net import Outside, can_make_outside
from support.runtime import Updates, stage_spec


def pytest_configure(config: pytest.Config) -> None:
    """The suite's own user memory, before any fixture runs: a session-wide fixture (a
    recorded run, a JupyterLab and its kernels) and what it starts file into it, never into
    the memory of whoever runs the suite (`$LIGHTSCIENTIST_MEMORY`, else their XDG data
    folder). Each test then has one of its own (`own_memory`)."""
    folder = tempfile.mkdtemp(prefix="ls-test-memory-")
    os.environ["LIGHTSCIENTIST_MEMORY"] = os.path.join(folder, "memory.sqlite3")


@pytest.fixture(autouse=True)
def own_memory(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test has a user memory of its own, empty at its start (`$LIGHTSCIENTIST_MEMORY`,
    which the processes it starts inherit): no test recalls another's lessons, none writes
    into the memory of whoever runs the suite."""
    path = tmp_path_factory.mktemp("memory") / "memory.sqlite3"
    monkeypatch.setenv("LIGHTSCIENTIST_MEMORY", str(path))
    return path


@pytest.fixture
def needs_bwrap() -> None:
    """Skips a test on a machine without a working bubblewrap, except under CI (`CI=true`),
    where it fails: CI installs it (scripts/setup)."""
    why = bwrap.problem()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"bubblewrap is needed under CI: {why}")
        pytest.skip(why)


@pytest.fixture
def outside(tmp_path: Path) -> Iterator[Outside]:
    """Another machine (`support.outside_net.Outside`), standing for the internet; skipped
    without root, which making it needs."""
    why = can_make_outside()
    if why is not None:
        pytest.skip(why)
    machine = Outside(tmp_path)
    yield machine
    machine.close()


@pytest.fixture
def needs_tex() -> None:
    """Skips a test on a machine without the TeX toolchain (latexmk, pdflatex), except under
    CI (`CI=true`), where it fails: CI installs it (scripts/setup)."""
    missing = missing_toolchain()
    if missing:
        why = f"{' and '.join(missing)} not found (scripts/setup installs TeX)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"the TeX toolchain is needed under CI: {why}")
        pytest.skip(why)


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    yield server
    server.close()


@pytest.fixture
def chat_model(chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch):
    """The real `ChatOpenAI` client, resolved as `--model some-model --base-url …` would be."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return resolve_model(
        "some-model", base_url=chat_server.base_url, api_key="not-a-real-key", timeout=20
    )


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
    """`make_runtime(model=None, **options)`: an `ExecutionRuntime` on `ws` reporting to
    `updates` (offline model and SQLite checkpoints unless told otherwise); closed at the end."""
    made: list[ExecutionRuntime] = []

    def make(model: Any = None, **options: Any) -> ExecutionRuntime:
        options.setdefault("checkpointer", "sqlite")
        options.setdefault("on_update", updates)
        runtime = ExecutionRuntime(
            ws, model if model is not None else resolve_model("offline"), **options
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
    """`spec_for(stage, visit=1)`: the worker spec layer 2 would hand down for a stage of the
    default table (its skill copied into the workspace)."""
    return lambda stage, visit=1: stage_spec(table, ws, stage, visit)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A real PostgreSQL server for the session (see `support.postgres`), stopped at the end."""
    from support.postgres import server_in_tmp

    with server_in_tmp() as server:
        yield server


@pytest.fixture
def own_postgres() -> Iterator[Any]:
    """A real PostgreSQL server of one test's own, for a test that stops it (the session's
    serves the other tests)."""
    from support.postgres import server_in_tmp

    with server_in_tmp() as server:
        yield server


@pytest.fixture
def magic_shell() -> Iterator[Any]:
    """The in-process IPython shell with the extension loaded (`%lightscientist`); this
    kernel's runs are stopped at the end."""
    from IPython.core.interactiveshell import InteractiveShell

    from lightscientist_jupyter import api

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "lightscientist_jupyter")
    yield shell
    api.stop_all()


@pytest.fixture
def pg_url(postgres: Any) -> str:
    """A fresh database of the session's server, as a URL with the password."""
    return str(postgres.new_database())


@pytest.fixture(params=["sqlite", "postgres"])
def checkpoints(request: pytest.FixtureRequest) -> str:
    """Each checkpointer a project can name by URL: the workspace's SQLite file, then a fresh
    database of the session's PostgreSQL server (a test taking it runs once on each)."""
    return str(checkpointer_named(request, request.param))


def checkpointer_named(request: pytest.FixtureRequest, name: str) -> str:
    """`postgres` → a fresh database's URL; any other name passes through."""
    return str(request.getfixturevalue("pg_url")) if name == "postgres" else name
