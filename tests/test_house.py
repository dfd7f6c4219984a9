"""The house's size rule: no module of the package over 400 lines, TypeScript included.

A module that grows past it has taken on a second job and splits (CONTRIBUTING.md).
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 400


def oversized(files: list[Path], limit: int = MAX_LINES) -> list[str]:
    """`path: N lines` for every file longer than `limit` lines."""
    found = []
    for path in files:
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > limit:
            found.append(f"{path.relative_to(REPO)}: {count} lines")
    return found


def package_sources() -> list[Path]:
    package = REPO / "lightscientist_jupyter"
    built = package / "labextension"  # the extension's build output, not our source
    python = [p for p in package.rglob("*.py") if built not in p.parents]
    typescript = sorted((REPO / "labextension" / "src").rglob("*.ts"))
    return sorted(python) + typescript


def test_no_module_is_over_400_lines():
    sources = package_sources()
    assert any(p.suffix == ".ts" for p in sources) and len(sources) > 50, sources
    assert oversized(sources) == []


def test_the_rule_flags_a_long_module():
    long = REPO / "tests" / "test_house.py"  # this file, against a limit it exceeds
    assert oversized([long], limit=10) == [
        f"tests/test_house.py: {len(long.read_text().splitlines())} lines"
    ]
