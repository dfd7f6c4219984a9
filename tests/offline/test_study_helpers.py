"""The study's shared helpers and design, tested directly: the module the scripts import,
loaded from where the package ships it (`offline/study/scripts/`)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lightscientist_jupyter.offline.study.scripts import study_common as sc
from lightscientist_jupyter.offline.study.scripts import study_design as sd

HEADER = "condition,metric,n,mean,std,ci95_low,ci95_high"


def summary(*rows: str) -> list[dict]:
    """Rows of summary.csv text, as a shell prints it (with a line of noise before)."""
    return sc.read_summary("$ cat experiment/summary.csv\n" + "\n".join([HEADER, *rows]))


def pair(lr: str, base: str, warm: str, base_div: str = "0.0", warm_div: str = "0.0"):
    """summary.csv rows of one learning rate: final_loss 'mean,std,lo,hi' and the diverged mean."""
    return (
        f'"lr={lr},warmup=0",final_loss,3,{base}',
        f'"lr={lr},warmup=0",diverged,3,{base_div},0,0,0',
        f'"lr={lr},warmup=50",final_loss,3,{warm}',
        f'"lr={lr},warmup=50",diverged,3,{warm_div},0,0,0',
    )


def test_fmt_is_four_significant_digits_and_keeps_integers():
    assert sc.fmt(0.043136726863093895) == "0.04314"
    assert sc.fmt(12345.678) == "1.235e+04"
    assert sc.fmt(3) == "3"
    assert (sc.fmt(float("inf")), sc.fmt(float("nan"))) == ("inf", "nan")


def test_t975_uses_the_next_smaller_table_entry():
    assert sc.t975(2) == 4.303
    assert sc.t975(22) == 2.086  # between 20 and 25: the wider interval of 20
    assert sc.t975(500) == 1.96
    assert math.isnan(sc.t975(0))


def test_describe_gives_the_t_interval_and_infinite_means_for_diverged_runs():
    n, mean, std, lo, hi = sc.describe([1.0, 2.0, 3.0])
    assert (n, mean, std) == (3, 2.0, 1.0)
    assert lo == pytest.approx(2.0 - 4.303 / math.sqrt(3)) and hi == pytest.approx(
        2.0 + 4.303 / math.sqrt(3)
    )
    n, mean, std, lo, hi = sc.describe([0.1, float("inf"), 0.2])
    assert (n, mean) == (3, float("inf")) and all(math.isnan(v) for v in (std, lo, hi))
    assert math.isnan(sc.describe([5.0])[2])  # no spread from one value
    assert sc.describe([])[0] == 0


def test_condition_labels_round_trip():
    assert sc.condition_name(0.2, 50) == "lr=0.2,warmup=50"
    assert sc.parse_condition(" lr=0.05, warmup=0 ") == (0.05, 0)
    assert sc.parse_condition("baseline") is None


def test_read_summary_skips_noise_and_rows_that_do_not_parse():
    rows = summary(
        '"lr=0.2,warmup=0",final_loss,3,0.02,0.004,0.01,0.03',
        '"lr=0.2,warmup=0",final_loss,three,1,1,1,1',
        "garbage",
    )
    assert rows == [
        {
            "condition": "lr=0.2,warmup=0",
            "metric": "final_loss",
            "n": 3,
            "mean": 0.02,
            "std": 0.004,
            "ci95_low": 0.01,
            "ci95_high": 0.03,
        }
    ]
    assert sc.read_summary("no header here") == []


def test_warmup_that_prevents_divergence_meets_the_criterion():
    rows = summary(*pair("0.8", "inf,nan,nan,nan", "0.03,0.005,0.02,0.04", "1.0", "0.0"))
    (c,) = sc.compare_warmup(rows)
    assert (c["lr"], c["warmup"], c["base_div"], c["warm_div"]) == (0.8, 50, 3, 0)
    assert c["verdict"] == "helps" and "prevented divergence (0 vs 3" in c["reason"]
    assert sc.criterion([c]) == ("met", "warmup helps at lr=0.8 and is worse nowhere")


def test_overlapping_intervals_are_no_clear_difference_and_worse_anywhere_is_not_met():
    same = pair("0.2", "0.021,0.004,0.010,0.032", "0.023,0.0045,0.012,0.034")
    worse = pair("0.05", "0.01,0.001,0.009,0.011", "0.05,0.001,0.049,0.051")
    comps = sc.compare_warmup(summary(*same, *worse))
    assert [(c["lr"], c["verdict"]) for c in comps] == [
        (0.05, "hurts"),
        (0.2, "no clear difference"),
    ]
    assert sc.criterion(comps) == ("not met", "warmup is worse at lr=0.05")
    assert sc.criterion(sc.compare_warmup(summary(*same)))[0] == "not met"
    assert sc.criterion([])[0] == "inconclusive"


def test_the_baseline_summary_gives_the_verdicts_the_paper_reports():
    text = (Path(__file__).parent / "golden" / "summary.csv").read_text(encoding="utf-8")
    rows = sc.read_summary(text)
    comps = sc.compare_warmup(rows)
    assert [c["verdict"] for c in comps] == [
        "no clear difference",
        "no clear difference",
        "both diverge",
    ]
    assert sc.criterion(comps)[0] == "not met"
    best = sc.best_condition(rows)
    assert (best["condition"], sc.fmt(best["mean"])) == ("lr=0.2,warmup=0", "0.02128")
    assert sc.interval(best) == "0.02128 [0.01027, 0.03229]"
    line = sc.comparison_line(comps[2])
    assert line.startswith("- lr=0.8: constant rate inf, 3/3 runs diverged; 50-step warmup inf")
    assert sc.summary_table_rows(rows[:1]) == (
        "| lr=0.05,warmup=0 | final_loss | 3 | 0.04314 | 0.003332 | 0.03486 | 0.05141 |"
    )


def test_write_atomic_replaces_the_file_and_leaves_no_temporary(tmp_path: Path):
    target = tmp_path / "deep" / "out.md"
    sc.write_atomic(target, "old")
    sc.write_atomic(target, "new\n")
    assert target.read_text(encoding="utf-8") == "new\n"
    assert [p.name for p in target.parent.iterdir()] == ["out.md"]


def test_goal_sentence_quotes_the_goal_on_one_line_and_clips_it():
    assert sc.goal_sentence("  two\n words ") == (
        ' The goal text given to this project was "two words"; the study above does not '
        "depend on it and does not answer it."
    )
    assert sc.clean_goal("x" * 500) == "x" * 399 + "…"
    assert sc.clean_goal("") == "(no goal text given)"


def test_the_design_plans_eighteen_runs_in_a_fixed_order():
    runs = sc.planned_runs(sd.LEARNING_RATES, sd.WARMUP_STEPS, sd.SEEDS)
    assert len(runs) == sd.N_RUNS == 18
    assert runs[0] == {
        "run_id": "r01",
        "lr": 0.05,
        "warmup": 0,
        "seed": 0,
        "condition": "lr=0.05,warmup=0",
    }
    assert (runs[-1]["run_id"], runs[-1]["condition"], runs[-1]["seed"]) == (
        "r18",
        "lr=0.8,warmup=50",
        2,
    )


def test_warmup_ramps_linearly_and_the_largest_rate_diverges():
    assert [sd.lr_at(s, 0.8, 50) for s in (0, 24, 49, 80)] == pytest.approx([0.016, 0.4, 0.8, 0.8])
    assert sd.lr_at(0, 0.8, 0) == 0.8
    stable = sd.train(0.2, 0, 0)
    assert stable["diverged"] == 0 and stable["final_loss"] == sd.train(0.2, 0, 0)["final_loss"]
    assert stable["final_loss"] < 0.05 and len(stable["curve"]) == 31
    # warmup postpones the divergence at lr 0.8 but does not prevent it
    assert (sd.train(0.8, 0, 0)["diverged_at"], sd.train(0.8, 50, 0)["diverged_at"]) == (15, 79)
