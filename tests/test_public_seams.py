"""Our dependencies are used through their public seams: no private name of another
distribution is imported, read or patched, and no SQL touches LangGraph's tables.

A private name (`_x`, `pkg._mod`) can change or vanish in any release of its package without
notice; a table's layout is the saver's business. Every module of the package is parsed with
`ast` (nothing is imported), and none is exempt: even the pruning of settled threads'
checkpoints (runtime/checkpoints/prune.py) goes through LangGraph's public `get_state`,
`update_state` and `delete_thread`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = "lightscientist_jupyter"
PACKAGE_DIR = Path(__file__).resolve().parents[1] / PACKAGE

DOCUMENTED = {"os._exit"}
"""Underscored names that their package documents as public."""

LANGGRAPH_TABLES = re.compile(
    r"\b(FROM|INTO|UPDATE|JOIN)\s+(checkpoints|writes|checkpoint_writes|checkpoint_blobs)\b",
    re.IGNORECASE,
)


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def private_uses(source: str) -> list[tuple[int, str]]:
    """`(line, dotted name)` for each private name of another package that `source` imports,
    reads or sets (`setattr(module, "_x", …)` included)."""
    tree = ast.parse(source)
    modules: dict[str, str] = {}  # a local name -> the external module or name it stands for
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    continue
                if _private(alias.name):
                    found.append((node.lineno, alias.name))
                modules[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] == PACKAGE:
                continue
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                if _private(dotted):
                    found.append((node.lineno, dotted))
                modules[alias.asname or alias.name] = dotted
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in modules and _private(node.attr):
                found.append((node.lineno, f"{modules[node.value.id]}.{node.attr}"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"setattr", "getattr", "delattr"}
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in modules
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
        ):
            found.append((node.lineno, f"{modules[node.args[0].id]}.{node.args[1].value}"))
    return [(line, name) for line, name in found if name not in DOCUMENTED]


def test_no_private_name_of_a_dependency_is_used():
    problems = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        rel = path.relative_to(PACKAGE_DIR.parent).as_posix()
        for line, name in private_uses(path.read_text(encoding="utf-8")):
            problems.append(f"{rel}:{line}: {name}")
    assert not problems, "private names of other packages:\n" + "\n".join(problems)


def test_the_scan_finds_each_way_of_reaching_a_private_name():
    source = (
        "import json\n"
        "import deepagents._version\n"
        "from json import encoder as enc\n"
        "from langgraph.checkpoint.serde.types import _DeltaSnapshot\n"
        "from deepagents import graph\n"
        "enc.c_make_encoder\n"
        "import atexit\n"
        "atexit._run_exitfuncs()\n"
        "setattr(graph, '_lc_version', None)\n"
        "import os\n"
        "os._exit(0)\n"
    )
    names = [name for _, name in private_uses(source)]
    assert sorted(names) == sorted(
        [
            "deepagents._version",
            "langgraph.checkpoint.serde.types._DeltaSnapshot",
            "atexit._run_exitfuncs",
            "deepagents.graph._lc_version",
        ]
    )


def test_no_sql_reaches_langgraphs_tables():
    hits = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        rel = path.relative_to(PACKAGE_DIR.parent).as_posix()
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if LANGGRAPH_TABLES.search(text):
                hits.append(f"{rel}:{number}: {text.strip()}")
    assert not hits, "SQL on LangGraph's checkpoint tables:\n" + "\n".join(hits)
