"""The Binder setup, replayed without Docker, from a clean copy of the repository.

What repo2docker does with `binder/` (a `binder/` folder makes it ignore configuration at the
repository root): it makes a Python environment (`binder/runtime.txt`) that has Jupyter and
Node.js, runs `pip install -r binder/requirements.txt` from the repository root (the `.` line
is the repository: pip builds its wheel, and the build hook compiles the JupyterLab extension
with jlpm), runs `binder/postBuild` from the repository root with `NB_PYTHON_PREFIX` set to
that environment, and opens `notebooks/quickstart.ipynb` in JupyterLab.

Here: the files git would commit (tracked and untracked-but-not-ignored, so no build output
and no node_modules) are copied to a temporary folder; `python -m venv` makes the environment;
the same pip command runs there (with the usual pip cache and index settings, and without
byte-compiling what it installs); `postBuild` runs with `NB_PYTHON_PREFIX` pointing at the
venv; and the venv's own python executes the quickstart with nbclient — so its `python3`
kernel runs from the venv, on the installed wheel.

Slow (a minute or two: every dependency is installed, and the extension is built from
source), so it is one test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

pytestmark = [pytest.mark.binder, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
EXTENSION = "lightscientist-jupyter"

RUN_QUICKSTART = """\
import sys
import nbformat
from nbclient import NotebookClient

source, target = sys.argv[1], sys.argv[2]
nb = nbformat.read(source, as_version=4)
nb.cells.append(nbformat.v4.new_code_cell(
    "import sys, lightscientist_jupyter\\n"
    "print('PROBE', sys.executable, lightscientist_jupyter.__file__)"))
client = NotebookClient(nb, timeout=300, kernel_name="python3",
                        resources={"metadata": {"path": sys.argv[3]}})
try:
    client.execute()
finally:
    nbformat.write(nb, target)
"""


def _clean_copy(destination: Path) -> None:
    """The files a commit of the working tree would hold: tracked and untracked, not ignored."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=REPO, capture_output=True, check=True)
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = REPO / name
        if not source.is_file():  # deleted in the working tree
            continue
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def _run(args: list[str], log: Path, **kwargs) -> float:
    """Run a step, its output into `log`; returns its duration. A failure shows the log."""
    started = time.monotonic()
    with log.open("w") as out:
        result = subprocess.run(args, stdout=out, stderr=subprocess.STDOUT, check=False,
                                **kwargs)
    if result.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-60:])
        pytest.fail(f"{' '.join(map(str, args))} exited {result.returncode}:\n{tail}")
    return time.monotonic() - started


@pytest.mark.timeout(1200)
def test_binder_steps_install_the_package_and_run_the_quickstart(tmp_path):
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs the repository's git checkout (to copy what it would commit)")
    missing = ("node (Node.js) is not on PATH; repo2docker's environment has it"
               if shutil.which("node") is None else
               "HATCH_JUPYTER_BUILDER_SKIP_NPM=1 skips the extension's build"
               if os.environ.get("HATCH_JUPYTER_BUILDER_SKIP_NPM") == "1" else None)
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the Binder replay cannot run under CI: {missing}")
        pytest.skip(missing)

    repo, venv, logs = tmp_path / "repo", tmp_path / "venv", tmp_path / "logs"
    logs.mkdir()
    _clean_copy(repo)
    assert (repo / "binder" / "requirements.txt").is_file()
    assert not (repo / "lightscientist_jupyter" / "labextension").exists()  # built here

    durations = {"venv": _run([sys.executable, "-m", "venv", str(venv)], logs / "venv.log")}
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "LIGHTSCIENTIST_MODEL",
                        "OPENAI_BASE_URL", "OPENAI_API_KEY", "JUPYTER_PATH",
                        "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    python = str(venv / "bin" / "python")

    # --no-compile: pip's byte-compiling of every installed module (about 20 s of processor
    # time here) is not what this replays; the kernel compiles what it imports
    durations["pip install -r binder/requirements.txt"] = _run(
        [python, "-m", "pip", "install", "--no-compile", "-r", "binder/requirements.txt"],
        logs / "pip.log", cwd=repo, env=env, timeout=900)
    shared = venv / "share" / "jupyter"
    assert (shared / "labextensions" / EXTENSION / "static" / "style.js").is_file()
    assert (venv / "etc" / "jupyter" / "jupyter_server_config.d"
            / "lightscientist_jupyter.json").is_file()

    durations["binder/postBuild"] = _run(
        ["bash", "binder/postBuild"], logs / "postBuild.log", cwd=repo,
        env={**env, "NB_PYTHON_PREFIX": str(venv)}, timeout=300)
    overrides = json.loads((shared / "lab" / "settings" / "overrides.json").read_text())
    assert overrides["@jupyterlab/apputils-extension:notification"] == {
        "fetchNews": "false", "checkForUpdates": False}
    assert "the JupyterLab extension and its server extension are installed" in (
        logs / "postBuild.log").read_text()

    notebooks = repo / "notebooks"
    executed = tmp_path / "executed-quickstart.ipynb"
    durations["quickstart"] = _run(
        [python, "-c", RUN_QUICKSTART, str(notebooks / "quickstart.ipynb"), str(executed),
         str(notebooks)], logs / "quickstart.log", cwd=notebooks,
        env={**env, "LIGHTSCIENTIST_AUTO_APPROVE": "1"}, timeout=300)

    nb = nbformat.read(executed, as_version=4)
    printed = ""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", (cell.source, output)
            assert output.get("name") != "stderr", (cell.source, output.get("text"))
            printed += output.get("text", "")
    assert "All checks passed: the project is done" in printed
    probe = next(line for line in printed.splitlines() if line.startswith("PROBE "))
    executable, package = probe.split()[1:]
    assert Path(executable).parent == venv / "bin", probe  # the kernel ran in the venv ...
    assert Path(package).is_relative_to(venv / "lib"), probe  # ... on the installed wheel
    (project,) = (notebooks / "studies").iterdir()
    assert (project / "paper" / "figures" / "figure1.png").is_file()
    drawn = json.loads((project / ".lightscientist" / "state.json").read_text())["stages_file"]
    assert Path(drawn).resolve().is_relative_to((venv / "lib").resolve()), drawn  # the wheel's
    assert (repo / "stages" / "review.toml").is_file()  # and the root Binder opens shows them
    print("\nBinder replay: " + ", ".join(f"{step} {seconds:.0f} s"
                                          for step, seconds in durations.items()))
