"""The dashboard header's usage chip: tokens and cost from the state, with the limits."""

from __future__ import annotations

from pathlib import Path

from lightscientist_jupyter.controller.state import ProjectState
from lightscientist_jupyter.jupyter import budget_card, status_line
from lightscientist_jupyter.vocab import Mode


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
        position=None,
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
