"""What the dashboard shows of usage and budgets: the header's cost-and-tokens chip.

The words come from the controller's state (`state.usage`, `state.budget`), so a dashboard
drawn from disk shows the same figures as `lightscientist status`.
"""

from __future__ import annotations

from lightscientist_jupyter.controller import budget as budgets
from lightscientist_jupyter.controller.state import ProjectState


def usage_words(state: ProjectState) -> str:
    """`12,345 tokens · $0.0123` (or `cost unknown`), with the project's limits when set."""
    used = budgets.project_usage(state)
    if not used.model_calls:
        return ""
    est = " (est.)" if used.estimated else ""
    cost = "cost unknown" if used.cost is None else f"${used.cost:.4f}"
    words = f"{used.tokens:,} tokens{est} · {cost}"
    limits = state.budget.get("project") or {}
    if limits:
        words += " · budget " + ", ".join(budgets.shown(k, v) for k, v in limits.items())
    return words
