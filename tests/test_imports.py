"""Imports point one way: shells → api → app → controller → supervisor → runtime.

Every module of the package is parsed with `ast` (nothing is imported), each import —
absolute or relative, at the top or inside a function — is resolved to the module it names,
and an arrow from a lower rank to a higher one fails the test. Leaves (`events`, `vocab`,
`errors`, …) import no layer; the offline scientist (`offline`) is reached only through the
model resolver, `runtime.models`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "lightscientist_jupyter"
PACKAGE_DIR = Path(__file__).resolve().parents[1] / PACKAGE

SHELL, API, APP, CONTROLLER, SUPERVISOR, RUNTIME, LEAF = 6, 5, 4, 3, 2, 1, 0
OFFLINE = RUNTIME  # beside layer 3 (it may use the runtime's message protocol), but see below
RANK_NAMES = {
    SHELL: "shell",
    API: "api",
    APP: "app",
    CONTROLLER: "controller (layer 1)",
    SUPERVISOR: "supervisor (layer 2)",
    RUNTIME: "runtime (layer 3)",
    LEAF: "leaf",
}
LAYERS = {  # first segment under the package -> rank
    "cli": SHELL,
    "__main__": SHELL,
    "jupyter": SHELL,
    "options": SHELL,
    "api": API,
    "app": APP,
    "controller": CONTROLLER,
    "supervisor": SUPERVISOR,
    "runtime": RUNTIME,
    "offline": OFFLINE,
    "events": LEAF,
    "errors": LEAF,
    "_fs": LEAF,
    "beneath": LEAF,
    "_faults": LEAF,
    "workspace": LEAF,
    "vocab": LEAF,
}
MODEL_RESOLVER = f"{PACKAGE}.runtime.models"
"""The one module that may import the offline scientist (lazily, when `offline` is asked)."""
MODEL_LIBRARIES = (
    "langchain",
    "langchain_core",
    "langchain_openai",
    "langgraph",
    "deepagents",
    "openai",
    "anthropic",
)


def _segment(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def rank_of(module: str) -> int | None:
    """The layer rank of a module of the package; None for the package root itself."""
    parts = module.split(".")
    assert parts[0] == PACKAGE, module
    if len(parts) == 1:
        return None
    if parts[1] not in LAYERS:
        raise AssertionError(
            f"{module} belongs to no layer: add '{parts[1]}' to LAYERS in "
            f"{Path(__file__).name} with its rank"
        )
    return LAYERS[parts[1]]


def discover(package_dir: Path = PACKAGE_DIR) -> dict[str, tuple[str, bool, str]]:
    """`{module name: (source, is_package, file)}` for every .py file of the package."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        rel = path.relative_to(package_dir.parent).with_suffix("")
        parts = list(rel.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        modules[".".join(parts)] = (path.read_text(encoding="utf-8"), is_package, str(path))
    return modules


def imported_modules(
    module: str, source: str, is_package: bool, known: set[str]
) -> list[tuple[int, str]]:
    """`(line, absolute module name)` for every import in `source`, wherever it appears.

    `from X import y` names `X.y` when that is a module of the package, else `X`.
    """
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                found.append((node.lineno, candidate if candidate in known else target))
    return found


def violations(modules: dict[str, tuple[str, bool, str]]) -> list[str]:
    known = set(modules)
    problems = []
    for module, (source, is_package, file) in modules.items():
        source_rank = rank_of(module)
        if source_rank is None:
            source_rank = SHELL  # the package root is the IPython extension's entry: a shell
        for line, target in imported_modules(module, source, is_package, known):
            if target != PACKAGE and not target.startswith(PACKAGE + "."):
                continue
            target_rank = rank_of(target)
            if target_rank is None:
                continue  # the package root is always loaded first; importing it adds nothing
            wrong = target_rank > source_rank or (source_rank == LEAF and target_rank != LEAF)
            if wrong:
                problems.append(
                    f"{file}:{line}: {module} ({RANK_NAMES[source_rank]}) imports "
                    f"{target} ({RANK_NAMES[target_rank]})"
                )
            elif (
                _segment(target) == "offline"
                and _segment(module) != "offline"
                and module != MODEL_RESOLVER
            ):
                problems.append(
                    f"{file}:{line}: {module} imports {target}: the offline "
                    f"scientist is reached only through {MODEL_RESOLVER}"
                )
    return problems


def test_every_module_is_mapped_to_a_layer():
    modules = discover()
    assert f"{PACKAGE}.controller.controller" in modules and f"{PACKAGE}.cli" in modules
    for module in modules:
        rank_of(module)


def test_imports_point_one_way():
    assert violations(discover()) == []


def test_controller_never_imports_a_model_library():
    for module, (source, is_package, file) in discover().items():
        if rank_of(module) not in (CONTROLLER, LEAF):
            continue
        for line, target in imported_modules(module, source, is_package, set()):
            assert target.split(".")[0] not in MODEL_LIBRARIES, f"{file}:{line} imports {target}"


# ------------------------------------------------------------------ the checker checks itself


def synthetic(**sources: str) -> dict[str, tuple[str, bool, str]]:
    """Modules from `name=source` pairs; `__` in a name stands for a dot."""
    modules = {}
    for name, source in sources.items():
        dotted = f"{PACKAGE}." + name.replace("__", ".")
        is_package = dotted.endswith(".init")
        if is_package:
            dotted = dotted[: -len(".init")]
        modules[dotted] = (source, is_package, f"<{dotted}>")
    return modules


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        (
            {
                "api__views": f"from {PACKAGE}.jupyter.dashboard import Dashboard\n",
                "jupyter__dashboard": "",
            },
            "api.views (api) imports lightscientist_jupyter.jupyter.dashboard (shell)",
        ),
        (
            {"app__commands": f"from {PACKAGE}.api import ProjectView\n", "api__init": ""},
            "app.commands (app) imports lightscientist_jupyter.api (api)",
        ),
        (
            {"controller__controller": "from ..app.project import Project\n", "app__project": ""},
            "controller.controller (controller (layer 1)) imports "
            "lightscientist_jupyter.app.project",
        ),
        (
            {
                "supervisor__loop": f"from {PACKAGE}.controller import ResearchController\n",
                "controller__init": "",
            },
            "supervisor.loop (supervisor (layer 2)) imports lightscientist_jupyter.controller ",
        ),
        (
            {
                "runtime__worker": "from ..supervisor.task import StageTask\n",
                "supervisor__task": "",
            },
            "runtime.worker (runtime (layer 3)) imports lightscientist_jupyter.supervisor.task",
        ),
        (
            {"controller__rules": "def f():\n    import lightscientist_jupyter.cli\n", "cli": ""},
            "<lightscientist_jupyter.controller.rules>:2:",
        ),
        (
            {"events__bus": f"from {PACKAGE} import supervisor\n", "supervisor__init": ""},
            "events.bus (leaf) imports lightscientist_jupyter.supervisor",
        ),
        (
            {"events__log": "from ..runtime.types import WorkerUpdate\n", "runtime__types": ""},
            "events.log (leaf) imports lightscientist_jupyter.runtime.types",
        ),
        (
            {
                "controller__init": "from . import something\nfrom .. import jupyter\n",
                "jupyter__init": "",
            },
            "controller (controller (layer 1)) imports lightscientist_jupyter.jupyter",
        ),
        (
            {"errors": "from .runtime import thing\n", "runtime__init": ""},
            "errors (leaf) imports lightscientist_jupyter.runtime",
        ),
        (
            {
                "app__project": f"from {PACKAGE}.offline.model import OfflineScientistModel\n",
                "offline__model": "",
            },
            "app.project imports lightscientist_jupyter.offline.model: the offline scientist is "
            "reached only through",
        ),
        (
            {
                "runtime__session": "def f():\n    from ..offline import model\n",
                "offline__model": "",
            },
            "runtime.session imports lightscientist_jupyter.offline.model",
        ),
        (
            {
                "offline__worker": f"from {PACKAGE}.supervisor.tools import TOOL_NAMES\n",
                "supervisor__tools": "",
            },
            "offline.worker (runtime (layer 3)) imports lightscientist_jupyter.supervisor.tools",
        ),
    ],
)
def test_checker_flags_a_wrong_way_import(sources, expected):
    found = violations(synthetic(**sources))
    assert len(found) == 1, found
    assert expected in found[0]


def test_checker_accepts_the_right_way():
    modules = synthetic(
        cli="from lightscientist_jupyter.controller import ResearchController\n"
        "from lightscientist_jupyter import __version__\n",
        controller__init="from .controller import ResearchController\n",
        controller__controller="from lightscientist_jupyter.supervisor.task import StageTask\n"
        "from ..events import EventBus\nimport json\n",
        supervisor__task="from lightscientist_jupyter.runtime import thing\n",
        runtime__init="from lightscientist_jupyter.errors import RuntimeLayerError\n",
        runtime__models="def resolve():\n    from ..offline.model import OfflineScientistModel\n",
        offline__model="from lightscientist_jupyter.runtime.protocol import parse_header\n"
        "from lightscientist_jupyter.vocab import SchedulingKind\n",
        runtime__protocol="",
        vocab="",
        jupyter__magic="from lightscientist_jupyter import api\n",
        api__init="from lightscientist_jupyter.app import commands\n",
        app__init="",
        app__commands="from lightscientist_jupyter.controller import ResearchController\n",
        events__bus="from lightscientist_jupyter.events.event import Event\n"
        "from ..errors import EventLogError\n",
        errors="",
        events__init="",
        events__event="",
        supervisor__init="",
    )
    assert violations(modules) == []


def test_checker_refuses_an_unmapped_module():
    with pytest.raises(AssertionError, match="belongs to no layer"):
        violations(synthetic(newthing="import os\n"))
