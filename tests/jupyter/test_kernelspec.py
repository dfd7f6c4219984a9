"""The "LightScientist" kernel installed with the package has the magic ready without %load_ext."""

from __future__ import annotations

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import start_new_kernel


def test_the_kernelspec_is_installed():
    spec = KernelSpecManager().get_kernel_spec("lightscientist")
    assert spec.display_name == "LightScientist (Python 3)"
    assert "lightscientist_jupyter" in spec.argv


def test_a_kernel_started_from_it_knows_the_magic(tmp_path):
    manager, client = start_new_kernel(kernel_name="lightscientist", cwd=str(tmp_path))
    shown: list[dict] = []

    def keep(msg: dict) -> None:
        if msg["msg_type"] in ("display_data", "execute_result"):
            shown.append(msg["content"]["data"])

    try:
        reply = client.execute_interactive("%lightscientist stages", timeout=60, output_hook=keep)
        assert reply["content"]["status"] == "ok", reply["content"]
        # the default table, drawn: the magic ran, it was not merely a cell without error
        (drawing,) = shown
        assert 'data-stage="idea.survey"' in drawing["text/html"]
        assert 'data-stage="paper.review"' in drawing["text/html"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
