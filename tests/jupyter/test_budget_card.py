"""The dashboard's usage and budget views: the header's chip (tokens and cost, with the limits),
the budget decision's card, the stage graph's hover titles, the workers' spend, and the
server's reply endpoint taking a new limit."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.background import stop_background_runs
from support.real_run import GOAL, cli
from support.slow import whole_project

from lightscientist_jupyter.app.usage import panel_usage
from lightscientist_jupyter.controller import load_table
from lightscientist_jupyter.controller.state import ProjectState, load_state
from lightscientist_jupyter.jupyter.dashboard import budget_card, graph, status_line
from lightscientist_jupyter.jupyter.graph_view import stage_words
from lightscientist_jupyter.jupyter.server.data import project_reply
from lightscientist_jupyter.jupyter.server.paths import Refused
from lightscientist_jupyter.vocab import Mode
from lightscientist_jupyter.workspace import Workspace


def test_the_header_shows_tokens_cost_and_budget():
    state = ProjectState(goal="g", mode=Mode.AUTO, stage="a", stages_file="t.toml")
    assert budget_card.usage_words(state) == ""
    state.usage = {
        "total": {"input_tokens": 1200, "output_tokens": 34, "model_calls": 2, "cost_usd": 0.0123}
    }
    state.budget = {"project": {"usd": 5.0, "tokens": 2_000_000}}
    words = budget_card.usage_words(state)
    assert words == "1,234 tokens · $0.0123 · budget $5.00, 2,000,000 tokens"
    html = status_line.render(
        goal="g",
        status="running",
        stage="a",
        visit=1,
        runner="r",
        mode="auto",
        model="m",
        elapsed="1 s",
        events=3,
        root=Path("/ws"),
        usage=words,
    )
    assert 'class="ls-chip ls-usage"' in html and "1,234 tokens · $0.0123" in html
    state.usage["total"]["cost_usd"] = None
    assert budget_card.usage_words(state).startswith("1,234 tokens · cost unknown")


def test_a_coding_agents_unreported_turns_are_never_shown_as_zero():
    """Turns of an ACP agent that reported no usage: 'usage not reported' on the graph's
    titles and the workers' rows, counted beside tokens that were reported."""
    from lightscientist_jupyter.jupyter.graph_view import spend_words
    from lightscientist_jupyter.values.usage import Usage

    assert spend_words(Usage(model_calls=2, unreported=2)) == "usage not reported"
    mixed = Usage(model_calls=3, unreported=1, input_tokens=100, output_tokens=20)
    assert spend_words(mixed).startswith("120 tok (1 not reported) · ")


def test_the_panel_is_sent_its_costs_in_words():
    """The side panel words no money itself: the server sends each cost as every view words
    it (the panel's own rule had drifted from the dashboard's once)."""
    state = ProjectState(goal="g", mode=Mode.AUTO, stage="b", stages_file="t.toml")
    state.usage = {
        "total": {"input_tokens": 900, "output_tokens": 100, "model_calls": 3, "cost_usd": 2.5},
        "visits": {
            "a#1": {"input_tokens": 500, "model_calls": 1, "cost_usd": 0.0},
            "b#1": {"input_tokens": 300, "model_calls": 1, "cost_usd": 0.01234},
            "b#2": {"input_tokens": 100, "model_calls": 1, "cost_usd": None},
        },
    }
    usage = panel_usage(state)
    assert usage["total"]["cost_words"] == "$2.50"
    assert usage["stages"]["a"]["cost_words"] == "$0"
    assert usage["stages"]["b"]["cost_words"] == "cost unknown"  # one call had no price
    state.usage["visits"]["b#2"]["cost_usd"] = 0.5
    assert panel_usage(state)["stages"]["b"]["cost_words"] == "$0.5123"


@pytest.fixture
@whole_project
def at_budget(tmp_path):
    """An offline project stopped at a budget decision (tokens=4000), nobody running it."""
    ws = tmp_path / "ws"
    proc = cli(
        ws, "research", GOAL, "--mode", "auto", "--model", "offline", "--budget", "tokens=4000"
    )
    assert proc.stdout.strip().splitlines()[-1] == "waiting_user", proc.stdout + proc.stderr
    return ws


@pytest.mark.slow
def test_the_card_the_graph_and_the_workers_show_the_spend(at_budget):
    state = load_state(Workspace.at(at_budget).state_file)
    card = budget_card.card_of(state.pending)
    assert card["heading"] == "Budget: the project budget of 4,000 tokens is spent"
    assert card["spent"].startswith("Spent so far: ") and card["on_what"].startswith("By stage")
    assert (card["key"], card["suggested"]) == ("tokens", 8000)
    spend = budget_card.WorkerSpend(Workspace.at(at_budget).state_dir).words()
    assert spend and all(" tok (est.) · $0" in words for words in spend.values())
    svg = graph.render_state(load_table(), state)
    spent = stage_words(state, state.stage)
    assert spent.endswith(" tok (est.) · $0") and spent in svg  # the stage's hover title
    assert budget_card.card_of(None) is None


def test_the_worker_spend_reads_no_ledger_through_a_link(tmp_path: Path):
    """The ledger is the kernel's file: a link in its place (made here with os.symlink, the
    reading side only) is not read, so another project's spend is never shown as this one's."""
    other = tmp_path / "other.jsonl"
    other.write_text('{"worker": "w9", "input_tokens": 700, "cost_usd": 1.5}\n')
    ws = Workspace.at(tmp_path / "ws")
    ws.state_dir.mkdir(parents=True)
    (ws.state_dir / "usage.jsonl").symlink_to(other)
    assert budget_card.WorkerSpend(ws.state_dir).words() == {}
    (ws.state_dir / "usage.jsonl").unlink()
    (ws.state_dir / "usage.jsonl").write_text(other.read_text())
    assert budget_card.WorkerSpend(ws.state_dir).words() == {"w9": "700 tok · $1.50"}


@pytest.mark.slow
def test_the_server_reply_takes_a_budget_field(at_budget):
    root = at_budget.parent
    body = {"path": "ws", "approve": True, "decision_id": None}
    with pytest.raises(Refused) as bad:
        project_reply(root, {**body, "budget": {"dollars": 3}})
    assert bad.value.status == 400 and "unknown budget key 'dollars'" in bad.value.message
    try:
        answer = project_reply(root, {**body, "budget": {"tokens": 1_000_000}})
        assert answer["applied_by"] == "server" and answer["status"] == "running"
        assert answer["resumed_by"]  # it goes on in the background with the raised budget
        state = load_state(Workspace.at(at_budget).state_file)
        assert state.budget["project"]["tokens"] == 1_000_000 and state.pending is None
    finally:
        stop_background_runs(root)
