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
    try:
        reply = client.execute_interactive("%lightscientist stages", timeout=60,
                                           output_hook=lambda msg: None)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
