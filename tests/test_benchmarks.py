"""The benchmark scripts still run: each on its tiny size (`--quick`), then run_all.py writes a
RESULTS.md from what they reported. No timing is asserted — figures on a shared machine are
not test material; benchmarks/RESULTS.md holds the real ones (`scripts/bench`)."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    # the first test sets up `reports`, which runs every script in turn: 270 s here at load ~3
    # (each script has its own 280 s limit), past the suite's 300 s for one test
    pytest.mark.timeout(900),
]

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = (
    "prompt_growth",
    "overhead",
    "events",
    "full_run",
    "recording",
    "sandbox",
    "checkpoints",
    "magic_latency",
    "snapshots",
    "jobs",
    "guarded_path",
    "search",
    "pdf",
    "notebook",
    "memory",
    "memory_prompts",
    "acp_worker",
)


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("bench")
    private_tmp = tmp_path_factory.mktemp("bench-tmp")  # their temporary files go here
    found = {}
    for name in SCRIPTS:
        proc = subprocess.run(
            [
                sys.executable,
                str(BENCH / f"{name}.py"),
                "--quick",
                "--json",
                str(out / f"{name}.json"),
            ],
            capture_output=True,
            text=True,
            timeout=280,
            env={**os.environ, "TMPDIR": str(private_tmp)},
        )
        assert proc.returncode == 0, (
            f"{name}.py failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        )
        found[name] = json.loads((out / f"{name}.json").read_text(encoding="utf-8"))
        found[name]["stdout"] = proc.stdout
    found["_dir"] = {
        "path": str(out),
        "tmp": str(private_tmp),
        "memory": os.environ["LIGHTSCIENTIST_MEMORY"],  # the memory the scripts were given
    }
    return found


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_reports_its_targets(reports, name):
    report = reports[name]
    assert report["markdown"].strip()
    assert report["targets"], f"{name}.py checked no target"
    for target in report["targets"]:
        assert {"name", "measured", "target", "met", "value", "limit"} <= set(target)
        assert f"target {target['name']}:" in report["stdout"]


def test_the_benchmarks_file_nothing_into_the_memory_they_were_given(reports):
    """Their runs file into a memory of their own, removed at the end: the user's would
    otherwise recall benchmark runs as lessons in their next project."""
    given = Path(reports["_dir"]["memory"])
    filed: list[str] = []
    if given.exists():
        with contextlib.closing(sqlite3.connect(f"file:{given}?mode=ro", uri=True)) as db:
            filed = [project for (project,) in db.execute("SELECT project FROM entries")]
    assert [p for p in filed if p.startswith(reports["_dir"]["tmp"])] == []
    assert list(Path(reports["_dir"]["tmp"]).glob("ls-bench-memory-*")) == []  # removed


def test_prompt_growth_compares_both_sides(reports):
    data = reports["prompt_growth"]["data"]
    assert data["visits"] == data["loops"] == 3
    assert data["delivered"] == len(data["single"]) == len(data["workers"])
    # the single agent's history grows from one task to the next; the supervisor's input not
    assert data["single"][-1]["first_input"] > data["single"][0]["first_input"]
    assert max(data["decisions"]) < 3 * min(data["decisions"])


def test_overhead_counts_both_runs(reports):
    data = reports["overhead"]["data"]
    assert len(data["layers"]) == len(data["bare"]) == 1
    assert data["layers"][0]["steps"] > data["layers"][0]["supervisor_steps"] > 0
    assert data["bare"][0]["steps"] > 0
    assert data["profile"]["parts"]  # the instrumented run found the calls it times


def test_events_reads_the_tail_and_cleans_up(reports):
    tail = reports["events"]["data"]["tail"]
    asked = 2 * 1024 * 1024  # --quick: a 2 MB log
    assert asked <= tail["bytes"] < asked + 4096, tail["bytes"]  # at most one line over
    stdout = reports["events"]["stdout"]
    assert f"read_tail on a 2.0 MB log of {tail['events']:,} events" in stdout
    assert len(tail["warm_ms"]) >= 5
    private_tmp = Path(reports["_dir"]["tmp"])
    assert f"writing a 2.0 MB log in {private_tmp}/ls-bench-events-" in stdout
    assert list(private_tmp.glob("ls-bench-events-*")) == []  # the log and its folder are gone


def test_full_run_measures_memory_and_files(reports):
    run = reports["full_run"]["data"]["runs"][0]
    assert run["tree_peak"] > 0 and run["samples"] > 0
    assert run["sqlite"] > 0 and run["events_bytes"] > 0


def test_recording_compares_plain_and_recording_runs(reports):
    data = reports["recording"]["data"]
    plain = [r for r in data["runs"] if not r["record"]]
    recorded = [r for r in data["runs"] if r["record"]]
    assert len(plain) == len(recorded) == 1
    assert plain[0]["status"] == recorded[0]["status"] == "paused"  # --quick: --until
    assert plain[0]["recording_bytes"] == 0 and plain[0]["calls"] == 0
    assert recorded[0]["calls"] > 10 and recorded[0]["recording_bytes"] > 0
    assert 0 < recorded[0]["recording_s"] < recorded[0]["wall_s"]


def test_sandbox_compares_both_modes(reports):
    data = reports["sandbox"]["data"]
    assert len(data["walls"]["none"]) == len(data["walls"]["bwrap"]) == 1
    assert data["ratio"] == data["walls"]["bwrap"][0] / data["walls"]["none"][0]
    assert set(data["per_command_ms"]["true"]) == {"none", "bwrap"}


def test_snapshots_times_the_run_and_the_finished_workspace(reports):
    data = reports["snapshots"]["data"]
    assert len(data["idle_s"]) == len(data["touched_s"]) == 3  # --quick: 3 of each
    assert len(data["in_run_s"]) >= 4 and data["files"] > 0  # every visit from setup on
    assert "| during the run |" in reports["snapshots"]["markdown"]


def test_jobs_times_a_local_job_from_submit_to_resume(reports):
    jobs = reports["jobs"]["data"]["local"]  # --quick: one run (its 8 search nodes' jobs)
    assert len(jobs) == 8 and "ray" not in reports["jobs"]["data"]
    for job in jobs:
        assert job["total_s"] >= job["job_s"] > 0 and job["react_s"] >= 0
    assert "| local | 8 |" in reports["jobs"]["markdown"]


def test_search_times_the_layers_the_parallel_nodes_and_the_inputs(reports):
    data = reports["search"]["data"]
    assert len(data["per_node_ms"]) == 8 and all(ms > 0 for ms in data["per_node_ms"])
    assert [len(data["timed"][str(p)]) for p in (1, 2)] == [1, 1]  # --quick: one run each
    for runs in data["timed"].values():
        assert runs[0]["nodes"] == 8 and runs[0]["wall_s"] > runs[0]["node_s"] > 0
    kinds = [kind for kind, _ in data["long"]["inputs"]]
    assert "search_over" in kinds
    assert "| parallel | search wall time | a node (median) |" in reports["search"]["markdown"]


def test_guarded_path_times_every_operation_both_ways(reports):
    us = reports["guarded_path"]["data"]["us"]
    assert set(us) == {"open", "read", "append", "atomic write"}
    for row in us.values():
        assert set(row) == {
            "plain open",
            "Beneath(root), openat2",
            "NO_LINKS, openat2",
            "Beneath(root), fallback",
            "NO_LINKS, fallback",
        }
        assert all(cpu > 0 and wall > 0 for cpu, wall in row.values())


def test_memory_times_recall_writes_and_the_degenerate_store(reports):
    data = reports["memory"]["data"]
    entries = data["entries"]
    assert (data["engine"], entries, len(data["write_ms"])) == ("sqlite", 2000, 10)  # --quick
    assert len(data["recall"]) == 4 and len(data["recall_ms"]) == 4 * 5
    assert all(0 < row["matched"] < entries // 4 for row in data["recall"].values())
    others = entries - len(range(0, entries, 12))  # one project of 12 is left out
    assert [row["matched"] for row in data["degenerate"].values()] == [others] * 3
    assert "BM25 scores all 2,000 entries to keep the best 5" in reports["memory"]["stdout"]


def test_memory_prompts_compares_a_project_with_memory_on_and_off(reports):
    data = reports["memory_prompts"]["data"]
    runs = data["runs"]
    assert runs["first"]["recalled_hits"] == 0 and runs["first"]["filed"] > 0
    assert runs["memory-on"]["recalled_tasks"] > 0 and runs["memory-on"]["recalled_hits"] > 0
    assert runs["memory-off"]["recalled_tasks"] == 0 and runs["memory-off"]["filed"] == 0
    assert (
        data["ratio_total"] == runs["memory-on"]["input_chars"] / runs["memory-off"]["input_chars"]
    )
    assert "| memory-on |" in reports["memory_prompts"]["markdown"]


def test_memory_runs_on_postgres_and_clears_its_table(reports, pg_url, tmp_path):
    import psycopg

    out = tmp_path / "memory.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "memory.py"), "--quick", "--engine", "postgres"]
        + ["--url", pg_url, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["data"]["engine"] == "postgres" and len(report["targets"]) == 2
    found = {q: row["matched"] for q, row in report["data"]["recall"].items()}
    assert found == {q: row["matched"] for q, row in reports["memory"]["data"]["recall"].items()}
    assert "ts_rank_cd scores all 2,000 entries to keep the best 5" in proc.stdout
    with psycopg.connect(pg_url) as conn:
        found = conn.execute("SELECT to_regclass('lightscientist_memory')").fetchone()
    assert found == (None,)


def test_run_all_writes_results(reports, tmp_path):
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "run_all.py"),
            "--from-json",
            reports["_dir"]["path"],
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    for heading in (
        "## Machine",
        "## Targets",
        "## 1. Prompt growth",
        "## 2. Orchestration overhead",
        "## 3. Event pipeline",
        "## 4. The full run",
        "## 5. Recording",
        "## 6. Sandbox",
        "## 7. Checkpoints in PostgreSQL",
        "## 9. Snapshots",
        "## 10. Jobs: submit to resume",
        "## 11. Guarded path",
        "## 15. Memory",
    ):
        assert heading in text
    assert "| cores |" in text and "| Python |" in text


def test_pdf_times_the_first_build_and_an_unchanged_one(reports, needs_tex):
    data = reports["pdf"]["data"]
    assert len(data["first_s"]) == len(data["unchanged_s"]) == 2  # --quick: two of each
    assert data["message"].startswith("built paper/paper.pdf: ")
    assert "| first build |" in reports["pdf"]["markdown"]


def test_notebook_times_notebook_run_against_the_same_code_as_a_script(reports):
    data = reports["notebook"]["data"]
    assert len(data["notebook_s"]) == len(data["script_s"]) == 2  # --quick: two of each
    assert data["message"].startswith("ran experiment/analysis.ipynb: 5 code cells, no error")
    assert "| notebook_run |" in reports["notebook"]["markdown"]
