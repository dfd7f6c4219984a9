"""The probe notes: the plan written before the probes run and the summary of their results.

The summary is built from the probe files' text as a shell prints it (`cat idea/probes/*.md`),
so every number in it is one a probe script wrote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypedDict

from lightscientist_jupyter.offline.study.scripts.study_design import (
    DATA_SEED,
    HIDDEN,
    N_POINTS,
    PROBE_CANDIDATES,
    PROBE_STEPS,
    probe_info,
)
from lightscientist_jupyter.offline.study.text import note


def probe_plan_md(candidates: Sequence[str]) -> str:
    """idea/probes/plan.md: one row per probed candidate, criteria fixed before running."""
    ids = [str(c) for c in candidates]
    rows = "\n".join(
        f"| {cid} | {probe_info(cid)['question']} | {probe_info(cid)['method']} | "
        f"{probe_info(cid)['metric']} | 60 s | `python idea/probes/{cid}.py {cid}` | "
        f"— (foreground) | planned |"
        for cid in ids
    )
    criteria = "\n".join(f"- **{cid}**: {probe_info(cid)['criteria']}" for cid in ids)
    return f"""# Probe plan

{note()}
| id | question | method | metric | time cap | command | pid | status |
|---|---|---|---|---|---|---|---|
{rows}

## Shared settings

Every probe uses the study's fixed dataset ({N_POINTS} points, data seed {DATA_SEED}), the same
2-{HIDDEN}-1 tanh MLP and weight seed 0, {PROBE_STEPS} full-batch gradient-descent steps, and
the CPU only. Each probe script writes its numbers to stdout and to `idea/probes/<id>.md`; each
takes well under a second, so the probes run in the foreground, one worker per candidate. The
status column is this plan's starting state; the result files record what happened.

## Criteria, fixed before running

{criteria}

One seed and {PROBE_STEPS} steps make these probes weak evidence: they check that a signal
exists, not how large it is.
"""


class ProbeResult(TypedDict):
    """A probe result file as `parse_probes` reads it."""

    block: str
    """The file's text."""
    fields: dict[str, str]
    """Its `- **Field:** value` lines, the field's name in lowercase."""
    verdict: str
    """The verdict's first word in lowercase (`missing` when there is none)."""
    reason: str
    """What follows the verdict's dash."""


_PROBE_HEAD_RE = re.compile(r"^# Probe result: ([a-z0-9][a-z0-9-]*)\b.*$", re.MULTILINE)
_FIELD_RE = re.compile(r"^- \*\*([A-Za-z][A-Za-z ().]*):\*\* ?(.*)$", re.MULTILINE)


def parse_probes(text: str) -> dict[str, ProbeResult]:
    """Probe result files found in `text` (first occurrence of each id wins)."""
    found: dict[str, ProbeResult] = {}
    heads = list(_PROBE_HEAD_RE.finditer(text))
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        block = text[m.start() : end]
        nxt = re.search(r"^# (?!Probe result: )", block[1:], re.MULTILINE)
        if nxt:  # another top-level file (plan.md, summary.md) starts here
            block = block[: nxt.start() + 1]
        cid = m.group(1)
        if cid in found:
            continue
        fields = {k.strip().lower(): v.strip() for k, v in _FIELD_RE.findall(block)}
        verdict_text = fields.get("verdict", "")
        verdict = verdict_text.split("—")[0].split(" ")[0].strip().lower() or "missing"
        found[cid] = {
            "block": block.rstrip() + "\n",
            "fields": fields,
            "verdict": verdict,
            "reason": verdict_text.split("—", 1)[1].strip() if "—" in verdict_text else "",
        }
    return found


def _demote(block: str) -> str:
    return re.sub(r"^(#+) ", lambda m: "##" + m.group(1) + " ", block, flags=re.MULTILINE)


def probe_summary_md(probe_texts: str, planned: Sequence[str] = PROBE_CANDIDATES) -> str:
    """idea/probes/summary.md from the probe files' text (e.g. `cat idea/probes/*.md`)."""
    text = str(probe_texts or "")
    probes = parse_probes(text)
    ids = list(dict.fromkeys([*planned, *probes]))
    coverage = "\n".join(
        f"- `{cid}`: {'done' if cid in probes else 'missing'}"
        + ("" if cid in probes else " (no `# Probe result:` file in the text given)")
        for cid in ids
    )
    rows = []
    for cid in ids:
        p = probes.get(cid)
        info = probe_info(cid)
        if p is None:
            rows.append(
                f"| {cid} | {info['question']} | {info['metric']} | — | missing | — | "
                "no result file |"
            )
            continue
        f = p["fields"]
        conf = "low (one seed, short run)"
        rows.append(
            f"| {cid} | {f.get('question', info['question'])} | "
            f"{f.get('metric', info['metric'])} | {f.get('result', '—')} | "
            f"{p['verdict']} | {conf} | {p['reason'] or '—'} |"
        )
    c1 = probes["c1-linear-warmup"]["verdict"] if "c1-linear-warmup" in probes else "missing"
    c2 = probes["c2-lr-sweep"]["verdict"] if "c2-lr-sweep" in probes else "missing"
    if c2 == "supports" and c1 in ("supports", "inconclusive"):
        comparison = (
            f"c2's probe {c2} its hypothesis: the learning-rate range spans stable and unstable "
            f"training, so there is something for warmup to act on. c1's probe is {c1}: "
            + (
                "warmup changed the outcome."
                if c1 == "supports"
                else "a signal may exist, but one seed and a short run cannot show a benefit."
            )
            + " The two are complementary rather than rivals: c2's sweep becomes the "
            "learning-rate axis of c1's comparison, which breaks the tie in favour of c1."
        )
        recommendation = (
            "Take **c1-linear-warmup** forward, with c2's learning rates (0.05, 0.2, 0.8) as its "
            "second factor, to the idea gate (**idea.gate**). The experiment, not the probe, "
            "will decide whether warmup helps."
        )
    else:
        comparison = (
            f"The probes did not separate the candidates cleanly (c1: {c1}, c2: {c2}). The "
            "criteria in plan.md stand; the offline demo does not move them after the fact."
        )
        recommendation = (
            "The question stays open. The offline demo still takes **c1-linear-warmup** forward "
            "to **idea.gate**, because it is the only candidate that tests warmup directly; the "
            "brief must say that the probes did not settle the choice."
        )
    embedded = "\n".join(_demote(probes[cid]["block"]) for cid in ids if cid in probes)
    return f"""# Probe summary

{note()}
## Coverage

{coverage}

## Results table

Results and verdicts are copied from the probe files (numbers as the files give them, 4
significant digits).

| id | question | metric | result | verdict | confidence | note |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}

## Comparison

{comparison}

## Caveats

Each probe used one seed, {PROBE_STEPS} steps and the same fixed dataset; the c1 probe used a
25-step warmup rather than the planned 50 because it is shorter. These numbers show whether a
signal exists, not its size or reliability across seeds.

## Recommendation

{recommendation}

## Probe files (as given)

{embedded or "No probe result files were found in the text given."}
"""
