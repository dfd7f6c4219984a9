"""Imports point one way: shells → api → app → controller → supervisor → runtime, in no circle.

Every module of the package is parsed with `ast` (nothing is imported), each import —
absolute or relative, at the top, inside a function or under `if TYPE_CHECKING:` — is
resolved to the module it names, and an arrow from a lower rank to a higher one fails the
test. Leaves (`events`, `vocab`, `errors`, …) import no layer; the offline scientist
(`offline`) is reached only through the model resolver, `runtime.models.resolver`.

The same arrows must form no circle: two modules that import each other (however far round)
cannot be read, tested or moved one without the other, and a circle that only works because
one side imports late or under `TYPE_CHECKING` is still a circle. `from pkg import name`
is an arrow to `pkg/__init__.py` unless `name` is a submodule.
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
    "redact": LEAF,
    "database_url": LEAF,
    "values": LEAF,
    "literature": LEAF,
    "memory": LEAF,
    "history": LEAF,
    "open_notebooks": LEAF,
}
MODEL_RESOLVER = f"{PACKAGE}.runtime.models.resolver"
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
    """`{module name: (source, is_package, file from the repository)}` for every .py file."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        rel = path.relative_to(package_dir.parent).with_suffix("")
        parts = list(rel.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        file = str(path.relative_to(package_dir.parent))
        modules[".".join(parts)] = (path.read_text(encoding="utf-8"), is_package, file)
    return modules


def imports(
    module: str, source: str, is_package: bool, known: set[str]
) -> list[tuple[int, str, str]]:
    """`(line, absolute module name, name imported)` for every import in `source`, wherever it is.

    `from X import y` names `X.y` when that is a module of the package, else `X` (for a
    package, its `__init__.py`); `import X.Y` names `X.Y`, imported as `X.Y`.
    """
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                found.append((node.lineno, candidate if candidate in known else target, alias.name))
    return found


def imported_modules(
    module: str, source: str, is_package: bool, known: set[str]
) -> list[tuple[int, str]]:
    """`(line, absolute module name)` for every import in `source`, wherever it appears."""
    return [(line, target) for line, target, _ in imports(module, source, is_package, known)]


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


def arrows(
    modules: dict[str, tuple[str, bool, str]],
) -> dict[str, dict[str, list[tuple[int, str]]]]:
    """`{module: {module it imports: [(line, name imported), …]}}` inside the package."""
    known = set(modules)
    graph: dict[str, dict[str, list[tuple[int, str]]]] = {module: {} for module in modules}
    for module, (source, is_package, _) in modules.items():
        for line, target, name in imports(module, source, is_package, known):
            if target in known and target != module:
                graph[module].setdefault(target, []).append((line, name))
    return graph


def strongly_connected(graph: dict[str, dict[str, list[tuple[int, str]]]]) -> list[list[str]]:
    """The strongly connected components of `graph` (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def circles(modules: dict[str, tuple[str, bool, str]]) -> list[str]:
    """One entry per import circle: its modules, then each arrow inside it as
    `file:line -> file: names imported`."""
    graph = arrows(modules)
    found = []
    for component in sorted(strongly_connected(graph)):
        if len(component) < 2:
            continue
        members = set(component)
        lines = [f"a circle of {len(component)} modules: {', '.join(component)}"]
        for module in component:
            for target, uses in sorted(graph[module].items()):
                if target in members:
                    names = ", ".join(dict.fromkeys(name for _, name in uses))
                    lines.append(
                        f"  {modules[module][2]}:{uses[0][0]} -> {modules[target][2]}: {names}"
                    )
        found.append("\n".join(lines))
    return found


def test_every_module_is_mapped_to_a_layer():
    modules = discover()
    assert f"{PACKAGE}.controller.controller" in modules and f"{PACKAGE}.cli" in modules
    for module in modules:
        rank_of(module)


def test_imports_point_one_way():
    assert violations(discover()) == []


def test_no_import_circles():
    found = circles(discover())
    assert not found, "modules that import each other:\n" + "\n".join(found)


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
        runtime__models__resolver="def resolve():\n"
        "    from ...offline.model import OfflineScientistModel\n",
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
        supervisor__init="from . import task\n",
    )
    assert violations(modules) == []
    assert circles(modules) == []


def test_checker_refuses_an_unmapped_module():
    with pytest.raises(AssertionError, match="belongs to no layer"):
        violations(synthetic(newthing="import os\n"))


def test_checker_finds_a_circle_in_a_package_on_disk(tmp_path):
    package = tmp_path / PACKAGE
    (package / "app").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "app" / "__init__.py").write_text("")
    (package / "app" / "project.py").write_text(
        "from lightscientist_jupyter.app.controls import Controls\n\nclass Project: ...\n"
    )
    (package / "app" / "controls.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from .project import Project, open_project\n\nclass Controls: ...\n"
    )
    found = circles(discover(package))
    assert found == [
        f"a circle of 2 modules: {PACKAGE}.app.controls, {PACKAGE}.app.project\n"
        f"  {PACKAGE}/app/controls.py:4 -> {PACKAGE}/app/project.py: Project, open_project\n"
        f"  {PACKAGE}/app/project.py:1 -> {PACKAGE}/app/controls.py: Controls"
    ]


@pytest.mark.parametrize(
    "sources",
    [
        {  # a late import inside a function still closes the circle
            "runtime__usage": "from .usage_callback import UsageCallback\n",
            "runtime__usage_callback": "def meter():\n    from .usage import Usage\n",
        },
        {  # `from . import x` is an arrow to the submodule x
            "runtime__jobs": "from . import ray_jobs\n",
            "runtime__ray_jobs": "from .jobs import JobManager\n",
        },
        {  # a name re-exported by a package's __init__ is an arrow to the __init__
            "cli__init": "from .handoff import handoff\n",
            "cli__handoff": f"from {PACKAGE}.cli import _fail\n",
        },
        {  # three modules round
            "runtime__graphs": "from .session import WorkerSession\n",
            "runtime__session": "from .runtime import ExecutionRuntime\n",
            "runtime__runtime": "import lightscientist_jupyter.runtime.graphs\n",
        },
    ],
)
def test_checker_finds_each_kind_of_circle(sources):
    found = circles(synthetic(**sources))
    assert len(found) == 1, found
    assert f"a circle of {len(sources)} modules" in found[0]
