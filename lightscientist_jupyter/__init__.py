"""LightScientist for Jupyter: a research agent that runs inside a Jupyter kernel.

Layers (imports point down only): shells (`cli`, `jupyter`) → `controller` (layer 1) →
`supervisor` (layer 2) → `runtime` (layer 3); `events` is a side channel every layer may use.
"""

__version__ = "0.1.0"


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the built JupyterLab extension lies (for `jupyter labextension develop`)."""
    return [{"src": "labextension", "dest": "lightscientist-jupyter"}]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """The server extension behind the side panel; loaded only by a Jupyter server."""
    return [{"module": "lightscientist_jupyter.jupyter.server"}]


def load_ipython_extension(ipython) -> None:  # noqa: ANN001 - IPython's shell
    """`%load_ext lightscientist_jupyter`: register `%lightscientist` (imported only now)."""
    from lightscientist_jupyter.jupyter.magic import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython) -> None:  # noqa: ANN001
    from lightscientist_jupyter.jupyter.magic import unload_ipython_extension as unload

    unload(ipython)
