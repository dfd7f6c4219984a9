"""The shipped stage tables are found from a source checkout and from an installed wheel.

The repository keeps them in its top-level `stages/` folder; the wheel carries that folder
into the package (pyproject's `force-include`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import lightscientist_jupyter
from lightscientist_jupyter.controller import default_table_path, load_table, shipped_stages

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
PACKAGE_NAME = "lightscientist_jupyter"


def test_source_checkout_uses_the_top_level_stages_folder():
    assert Path(lightscientist_jupyter.__file__).resolve().parent == REPO / PACKAGE_NAME
    assert shipped_stages() == REPO / "stages"
    assert default_table_path() == REPO / "stages" / "research.toml"
    assert load_table().path == REPO / "stages" / "research.toml"
    assert not (REPO / PACKAGE_NAME / "stages").exists()  # one source for the shipped tables


@pytest.fixture(scope="module")
def unpacked_wheel(built_wheel: Path, tmp_path_factory) -> Path:
    """The project's wheel, unzipped (an 'installed' copy)."""
    site = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(built_wheel) as archive:
        archive.extractall(site)
    return site


def test_wheel_ships_every_table_and_every_skill(unpacked_wheel):
    shipped = unpacked_wheel / PACKAGE_NAME / "stages"
    assert sorted(p.name for p in shipped.glob("*.toml")) == ["research.toml", "review.toml"]
    source_skills = sorted(p.name for p in (REPO / "stages" / "skills").glob("*.md"))
    assert sorted(p.name for p in (shipped / "skills").glob("*.md")) == source_skills
    assert len(source_skills) == 14 + 4
    for name in ("research.toml", "review.toml", "skills/review.read.md"):
        assert (shipped / name).read_bytes() == (REPO / "stages" / name).read_bytes()


def run_installed(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_installed_wheel_finds_its_own_table(unpacked_wheel, tmp_path):
    where = run_installed(
        unpacked_wheel,
        tmp_path,
        "-c",
        "import lightscientist_jupyter; print(lightscientist_jupyter.__file__)",
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).resolve().is_relative_to(unpacked_wheel.resolve())

    result = run_installed(unpacked_wheel, tmp_path, "-m", PACKAGE_NAME, "stages")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.rstrip("\n").splitlines()
    prefix = "stage table "
    assert lines[0].startswith(prefix)
    table_path = Path(lines[0][len(prefix) :].split(" · ")[0])
    assert table_path == (unpacked_wheel / PACKAGE_NAME / "stages" / "research.toml").resolve()
    assert not table_path.is_relative_to(REPO)
    rows = lines[3:]  # title, blank line, column header
    assert len(rows) == 15
    assert rows[0].split()[0] == "idea.survey" and rows[-1].split()[0] == "done"


@pytest.fixture(scope="module")
def fresh_venv(built_wheel: Path, tmp_path_factory) -> Path:
    """A new virtual environment outside the checkout, the wheel installed into it.

    The dependencies come from this interpreter's site-packages through a plain path line in
    a `.pth` file: a path line does not run the `.pth` files of that folder, so an editable
    install of the checkout there does not put the checkout on the new environment's path.
    """
    root = tmp_path_factory.mktemp("fresh") / "venv"
    made = subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(root)], capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    python = root / "bin" / "python"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--disable-pip-version-check", "--quiet", str(built_wheel)],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    (site_packages(root) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return root


def site_packages(venv: Path) -> Path:
    (folder,) = (venv / "lib").glob("python3*/site-packages")
    return folder


def run_in_venv(venv: Path, cwd: Path, *args: str, timeout: float = 60):
    """`venv/bin/<args>` from `cwd`, with no PYTHONPATH and no model configured."""
    unset = {"PYTHONPATH", "LIGHTSCIENTIST_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"}
    env = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [str(venv / "bin" / args[0]), *args[1:]],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def test_a_fresh_venv_draws_the_tables_and_runs_the_first_stage_from_the_wheel(
    fresh_venv, tmp_path
):
    shipped = (site_packages(fresh_venv) / PACKAGE_NAME / "stages").resolve()
    drawn = run_in_venv(fresh_venv, tmp_path, "lightscientist", "stages")
    assert drawn.returncode == 0, drawn.stderr
    first = drawn.stdout.splitlines()[0]
    assert first.startswith(f"stage table {shipped / 'research.toml'} · 14 stages + done"), first
    review = run_in_venv(
        fresh_venv, tmp_path, "lightscientist", "stages", "--stages", str(shipped / "review.toml")
    )
    assert review.returncode == 0, review.stderr
    assert "4 stages + done · start: review.scope" in review.stdout.splitlines()[0]

    ws = tmp_path / "demo-project"
    run = run_in_venv(
        fresh_venv, tmp_path, "lightscientist", "research",
        "Does learning-rate warmup help a small MLP train?", "--workspace", str(ws),
        "--mode", "auto", "--model", "offline", "--until", "idea.survey", timeout=180,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    state = json.loads((ws / ".lightscientist" / "state.json").read_text(encoding="utf-8"))
    assert state["status"] == "paused" and state["stage"] == "idea.generate", state["status"]
    assert Path(state["stages_file"]) == shipped / "research.toml"
    assert (ws / "idea" / "survey.md").stat().st_size > 0
    assert not Path(state["stages_file"]).is_relative_to(REPO)


def test_wheel_ships_the_offline_study_scripts(unpacked_wheel, tmp_path):
    source = REPO / PACKAGE_NAME / "offline" / "study" / "scripts"
    shipped = unpacked_wheel / PACKAGE_NAME / "offline" / "study" / "scripts"
    names = sorted(p.name for p in source.glob("*.py"))
    assert "study_common.py" in names and "probe.py" in names
    assert sorted(p.name for p in shipped.glob("*.py")) == names
    read = run_installed(
        unpacked_wheel,
        tmp_path,
        "-c",
        "from lightscientist_jupyter.offline.study.files import script_files\n"
        "print(sorted(script_files('experiment/run_experiment.py')))",
    )
    assert read.returncode == 0, read.stderr
    assert read.stdout.split() == [
        "['experiment/run_experiment.py',",
        "'experiment/study_common.py',",
        "'experiment/study_design.py']",
    ]


def test_the_wheel_installs_with_the_postgres_and_ray_extras(built_wheel, tmp_path):
    """`pip install 'lightscientist-jupyter[postgres,ray]'`, resolved against this machine's
    packages only (no index): both extras exist and name the engines the features load."""
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--quiet",
         "--disable-pip-version-check", "--report", str(report), f"{built_wheel}[postgres,ray]"],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (install,) = json.loads(report.read_text())["install"]
    assert install["requested_extras"] == ["postgres", "ray"]
    metadata = install["metadata"]
    assert {"postgres", "ray"} <= set(metadata["provides_extra"])
    from packaging.requirements import Requirement

    needs = [Requirement(r) for r in metadata["requires_dist"]]
    for name, extra in [("langgraph-checkpoint-postgres", "postgres"), ("psycopg", "postgres"),
                        ("ray", "ray")]:  # fmt: skip
        (need,) = [r for r in needs if r.name == name]
        assert need.marker is not None and need.marker.evaluate({"extra": extra}), need
        assert not need.marker.evaluate({"extra": ""}), need  # only with the extra
