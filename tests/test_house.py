"""The house's size mark: a module of the package past 450 lines, TypeScript included, is
named in a warning (pytest's warnings summary), not failed.

A module has one job and its size follows from it; one that grows long may have taken on a
second job, and then it splits by job (CONTRIBUTING.md). A hard limit was met by squeezing
(joined lines, shortened why-comments, `# fmt: skip`), which is harder to read than the
longer file, so the length only asks the question.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
WARN_LINES = 450


class LongModule(UserWarning):
    """A module past `WARN_LINES` lines: has it taken on a second job?"""


def oversized(files: list[Path], limit: int = WARN_LINES) -> list[str]:
    """`path: N lines` for every file longer than `limit` lines (paths from the repository)."""
    found = []
    for path in files:
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > limit:
            shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
            found.append(f"{shown}: {count} lines")
    return found


def warn_long(files: list[Path], limit: int = WARN_LINES) -> None:
    """A `LongModule` warning for every file longer than `limit` lines."""
    for entry in oversized(files, limit):
        warnings.warn(
            LongModule(f"{entry} (past {limit}): has it taken on a second job? (CONTRIBUTING.md)"),
            stacklevel=2,
        )


def package_sources() -> list[Path]:
    package = REPO / "lightscientist_jupyter"
    built = package / "labextension"  # the extension's build output, not our source
    python = [p for p in package.rglob("*.py") if built not in p.parents]
    typescript = sorted((REPO / "labextension" / "src").rglob("*.ts"))
    return sorted(python) + typescript


@pytest.mark.filterwarnings("default::UserWarning")  # shown in the summary, not an error
def test_long_modules_are_named_in_a_warning():
    sources = package_sources()
    assert any(p.suffix == ".ts" for p in sources) and len(sources) > 50, sources
    warn_long(sources)


def test_the_mark_names_a_long_module_and_its_length(tmp_path):
    long = tmp_path / "long.py"
    long.write_text("x = 1\n" * (WARN_LINES + 1), encoding="utf-8")
    short = tmp_path / "short.py"
    short.write_text("x = 1\n" * WARN_LINES, encoding="utf-8")
    with pytest.warns(LongModule) as seen:
        warn_long([long, short])
    assert [str(w.message) for w in seen] == [
        f"{long}: {WARN_LINES + 1} lines (past {WARN_LINES}): has it taken on a second job? "
        "(CONTRIBUTING.md)"
    ]


def test_the_mark_reads_paths_from_the_repository():
    this = REPO / "tests" / "test_house.py"
    assert oversized([this], limit=10) == [
        f"tests/test_house.py: {len(this.read_text().splitlines())} lines"
    ]
