"""Shared fixtures: real files in `tmp_path`, real stage tables, a real event bus.

Nothing of ours is mocked. A test that needs a stage table writes one (with its skill files)
into its own folder through `write_table`; tests of gates use the shipped default table.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from lightscientist_jupyter.controller import ResearchController, StageTable, load_table
from lightscientist_jupyter.events import Event, EventBus
from lightscientist_jupyter.values import notebook
from lightscientist_jupyter.workspace import Workspace

# This machine's shell sets PYTHONDONTWRITEBYTECODE, which also keeps pytest from saving the
# test modules it rewrites for their asserts: each worker rewrote all 450 of them at each run,
# a third of its collection (5 s of processor time a worker). The test processes save them
# (tests/__pycache__, ignored by git); the processes the tests start keep the environment's
# setting, and so do the workspaces they write in.
sys.dont_write_bytecode = False

pytest_plugins = [
    "support.slow",
    "support.tiers",
    "support.fixtures",
    "support.real_run",
    "support.parallel",
    "support.cpu_report",
]  # slow: real_run uses it

REPO_ROOT = Path(__file__).resolve().parents[1]

SMALL_TABLE = """\
start = "a"

[stages.a]
skill = "skills/a.md"
outputs = ["out/a.md"]
next = "gate"
allowed = ["gate", "a"]
max_visits = 3

[stages.gate]
skill = "skills/gate.md"
outputs = ["out/brief.md"]
next = "b"
allowed = ["b"]
approval = true

[stages.b]
skill = "skills/b.md"
outputs = ["out/b.md", "out/b.csv"]
next = "done"
allowed = ["done", "a"]
"""
"""a → gate (approval) → b → done; `a` may loop on itself at most 3 times; `b` may go back."""

_SKILL = re.compile(r"""^\s*skill\s*=\s*["']([^"']+)["']""", re.MULTILINE)

WriteTable = Callable[..., Path]


def _write_table(
    directory: Path,
    toml_text: str | bytes,
    skills: dict[str, str] | None = None,
    name: str = "table.toml",
) -> Path:
    """Write a stage table and its skill files under `directory`; returns the table's path.

    With `skills=None`, every `skill = "..."` path in the text gets a non-empty brief. With a
    dict, exactly those skill files are written (relative path -> content), so a test can leave
    one missing or empty.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    if isinstance(toml_text, bytes):
        path.write_bytes(toml_text)
        text = toml_text.decode("utf-8", errors="replace")
    else:
        path.write_text(toml_text, encoding="utf-8")
        text = toml_text
    if skills is None:
        skills = {rel: f"# {rel}\n\nDo the work of this stage.\n" for rel in _SKILL.findall(text)}
    for rel, content in skills.items():
        skill = directory / rel
        skill.parent.mkdir(parents=True, exist_ok=True)
        skill.write_text(content, encoding="utf-8")
    return path


@pytest.fixture
def write_table() -> WriteTable:
    """`write_table(directory, toml_text, skills=None, name="table.toml") -> Path`."""
    return _write_table


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """An empty project folder."""
    return Workspace.at(tmp_path / "ws")


@pytest.fixture
def small_table(tmp_path: Path) -> StageTable:
    """`SMALL_TABLE` loaded from real files in its own folder."""
    return load_table(_write_table(tmp_path / "table", SMALL_TABLE))


@pytest.fixture
def default_table() -> StageTable:
    return load_table()


class Recorder:
    """A real `EventBus` with a subscriber that keeps every event."""

    def __init__(self) -> None:
        self.bus = EventBus()
        self.events: list[Event] = []
        self.bus.subscribe(self.events.append)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of_type(self, type_: str) -> list[Event]:
        return [e for e in self.events if e.type == type_]


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def _produce(controller: ResearchController, content: str = "some real content\n") -> list[str]:
    """Write every required output of the controller's current stage; returns their paths.
    A notebook among them holds `content` as its one Markdown cell (valid, nothing to run)."""
    stage = controller.table[controller.stage]
    for rel in stage.outputs:
        path = controller.workspace.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = content
        if notebook.is_notebook(rel):
            text = notebook.dumps(notebook.new_notebook([("text", "markdown", content)], "test"))
        path.write_text(text, encoding="utf-8")
    return list(stage.outputs)


@pytest.fixture
def produce() -> Callable[..., list[str]]:
    """`produce(controller, content=...)`: write the current stage's required outputs."""
    return _produce


def _advance(
    controller: ResearchController, next_stage: str | None = None, summary: str | None = None
):
    """Produce the current stage's outputs and finish it; the outcome must be accepted."""
    _produce(controller)
    stage = controller.stage
    outcome = controller.finish_stage(summary or f"{stage} did its work.", (), next_stage)
    assert outcome.accepted, outcome.message
    return outcome


@pytest.fixture
def advance() -> Callable[..., object]:
    """`advance(controller, next_stage=None, summary=None)`: finish the current stage."""
    return _advance


@pytest.fixture
def python() -> str:
    return sys.executable


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory) -> Path:
    """The project's wheel, built once per test session from this checkout (no network)."""
    import subprocess

    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--disable-pip-version-check",
            "-q",
            "-w",
            str(out),
            str(REPO_ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = out.glob("lightscientist_jupyter-*.whl")
    return wheel
