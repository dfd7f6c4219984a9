"""The Jupyter server extension behind the side panel: its HTTP handlers and what they answer.

`extension` registers the handlers; `data` reads a project from disk into the panel's
answers, `control` applies its run controls, `handoff` its hand-over steps, and `paths`
keeps every request inside the server's root. The extension point names this package, so
the loader is reached here — imported only when a server loads it, because the dashboard in
a kernel uses `control` and `paths` without Jupyter's server.
"""

from typing import Any


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Register the handlers (see `extension`); called by the Jupyter server."""
    from lightscientist_jupyter.jupyter.server.extension import _load_jupyter_server_extension

    _load_jupyter_server_extension(serverapp)
