"""Running notebooks in tests: nbclient on the python3 kernel, the executed copy kept."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient


def execute_notebook(source: Path, folder: Path, timeout: int = 300) -> nbformat.NotebookNode:
    """Execute `source` with `folder` as the kernel's working directory; the executed notebook
    is written beside (`executed-<name>`) for a failure's post-mortem."""
    nb = nbformat.read(source, as_version=4)
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    try:
        client.execute()
    finally:
        nbformat.write(nb, folder / f"executed-{source.name}")
    return nb
