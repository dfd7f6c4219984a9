#!/usr/bin/env python3
"""One node of the experiment search: the warmup study's MLP trained under one configuration.

Written by LightScientist's offline demo model (see DISCLAIMER in study_design.py), one copy per
node of the search tree in `experiment/tree/<node>/`, with the settings below changed from node
to node (a draft sets them, an improvement changes one of them, a fix repairs the script).
Run from the workspace root:
    python experiment/tree/<node>/search_node.py experiment/tree/<node>/result.json
It trains the study's 2-16-1 tanh MLP by full-batch gradient descent (one epoch is one step
over the whole generated dataset) for each of the study's seeds, and writes the result file:
a JSON object whose `final_loss` is the mean final training loss over the seeds (lower is
better), with the settings and each seed's loss beside it. A run that diverges writes
`final_loss: null`. Results depend only on the settings, never on the clock.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

# the settings a node of the search varies
LR = 0.2  # learning rate after the warmup
WARMUP = 50  # warmup length in epochs (linear, from LR / WARMUP up to LR)
SCHEDULE = "constant"  # after the warmup: "constant", or "cosine" (decays to 0 at the end)
EPOCHS = 300  # full-batch gradient steps

# Imported modules beside a script leave no __pycache__ in the workspace.
sys.dont_write_bytecode = True
from study_design import SEEDS, lr_at, train  # noqa: E402


def rate(step: int) -> float:
    """The learning rate at `step`: the linear warmup, then constant or cosine decay."""
    if step < WARMUP or SCHEDULE != "cosine":
        return lr_at(step, LR, WARMUP)
    progress = (step - WARMUP) / max(1, EPOCHS - WARMUP)
    return LR * 0.5 * (1.0 + math.cos(math.pi * progress))


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1:
        print("usage: search_node.py RESULT_FILE", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    losses = [train(LR, WARMUP, seed, steps=EPOCHS, rate=rate)["final_loss"] for seed in SEEDS]
    mean = sum(losses) / len(losses)
    settings = {"lr": LR, "warmup": WARMUP, "schedule": SCHEDULE, "epochs": EPOCHS}
    result = {
        "final_loss": mean if math.isfinite(mean) else None,
        "settings": settings,
        "seeds": list(SEEDS),
        "final_loss_per_seed": [x if math.isfinite(x) else None for x in losses],
    }
    out = Path(argv[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(
        f"settings {json.dumps(settings)}; {len(SEEDS)} seeds; "
        f"{time.perf_counter() - t0:.2f} s; wrote {out}"
    )
    print(f"final_loss={mean!r}")
    return 0 if math.isfinite(mean) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
