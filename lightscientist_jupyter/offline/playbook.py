"""The offline worker's playbook: what to do for each stage of the default table it knows.

Keyed by the stage id a task names; each plan is a function from the task and the history to
the steps of the stage. Steps write real files and run real commands (the scripts come from
`study.files`), so the results, the figure and the paper's numbers are genuine outputs of the
workspace. Which stage to suggest next comes from the task: its default next stage, or an
allowed one the plan prefers (the same stage again for one more batch, or an allowed stage
this playbook plays as the probe stage); never a stage id the task did not offer.
"""

from __future__ import annotations

from collections.abc import Callable

from lightscientist_jupyter.offline import memory as offline_memory
from lightscientist_jupyter.offline import survey, tools
from lightscientist_jupyter.offline.history import Act, History, Step
from lightscientist_jupyter.offline.steps import (
    Task,
    complete,
    last_line,
    run,
    shell_words,
    with_feedback,
    write,
    write_all,
)
from lightscientist_jupyter.offline.study import briefs, idea, plans, probes
from lightscientist_jupyter.offline.study.files import (
    ANALYSIS,
    PROBE,
    analysis_files,
    notebook_cells,
    probe_path,
    script_files,
    shared_files,
)
from lightscientist_jupyter.offline.study.scripts.study_design import CANDIDATES, PROBE_CANDIDATES
from lightscientist_jupyter.values.search import TREE_FILE
from lightscientist_jupyter.values.task import LESSONS_STAGE

Plan = Callable[[Task, History], list[Step]]

HELPER_PREFIX = "probe "
"""Label prefix of the parallel workers the offline supervisor starts (`probe <candidate>`)."""
BUDGET_QUESTION = (
    "How much compute may the study use: 'small' (a few seconds per batch on a "
    "laptop CPU) or 'full' (minutes)?"
)


def is_helper(label: str) -> bool:
    """Whether a worker's label marks it as one of a stage's parallel helpers."""
    return label.startswith(HELPER_PREFIX)


def note_stage(
    task: Task, path: str, text: str, summary: list[str], feedback: bool = True
) -> list[Step]:
    """Write one note (with the reviewer's feedback, if any), complete the stage."""
    return [
        write("write", path, with_feedback(task, text) if feedback else text),
        complete(task, summary, [path], task.default_next),
    ]


def read_then_note(
    task: Task,
    h: History,
    command: str,
    path: str,
    build: Callable[[str], str],
    summary: str,
    feedback: bool = True,
) -> list[Step]:
    """Read with `command` (its output is `h.result("read")` once it ran), then write the note
    `build` makes of it and complete the stage."""
    note = note_stage(task, path, build(h.result("read")), [summary], feedback=feedback)
    return [run("read", command), *note]


def plan_generate(task: Task, h: History) -> list[Step]:
    answer = h.result("ask").replace("Answer from the supervisor:", "").strip() or "small"
    return [
        Act("ask", tools.ASK, {"question": BUDGET_QUESTION}),
        write(
            "write",
            "idea/candidates.md",
            with_feedback(task, idea.candidates_md(task.goal, answer)),
        ),
        complete(
            task,
            [
                "Proposed three candidate studies: " + ", ".join(CANDIDATES) + ".",
                f"Compute budget agreed with the supervisor: {answer[:80]}.",
            ],
            ["idea/candidates.md"],
            task.default_next,
        ),
    ]


def probe_stage(task: Task) -> str | None:
    """The allowed next stage this playbook plays as the probe stage, if the task offers one."""
    return next((s for s in task.allowed if PLAYBOOK.get(s) is plan_probe_batch), None)


def plan_evaluate(task: Task, h: History) -> list[Step]:
    probe = probe_stage(task) if task.visit == 1 else None
    return [
        write("write", "idea/evaluation.md", with_feedback(task, idea.evaluation_md())),
        complete(
            task,
            [
                "Scored the three candidates for value, cost and risk.",
                "c1 and c2 are close: "
                + ("a cheap probe will separate them." if probe else "the probes decided."),
            ],
            ["idea/evaluation.md"],
            task.next_or_default(probe),
        ),
    ]


def plan_probe_batch(task: Task, h: History) -> list[Step]:
    if is_helper(task.label):
        candidate = task.label.removeprefix(HELPER_PREFIX)
        script, note = probe_path(candidate), f"idea/probes/{candidate}.md"
        return [
            write("write", script, script_files(script, PROBE)[script]),
            run("run", shell_words("python", script, candidate)),
            complete(
                task,
                [f"Ran the probe for {candidate}; result in {note}."],
                [note],
                task.default_next,
            ),
        ]
    # The shared modules go in before the parallel probes start, so no probe reads one that
    # another probe worker is writing.
    return [
        write("write", "idea/probes/plan.md", probes.probe_plan_md(list(PROBE_CANDIDATES))),
        *write_all("shared", shared_files("idea/probes")),
        complete(
            task,
            [
                "Planned one probe per top candidate: " + ", ".join(PROBE_CANDIDATES) + ".",
                "The supervisor runs the probes as parallel workers.",
            ],
            ["idea/probes/plan.md"],
            task.default_next,
        ),
    ]


def helper_labels(stage: str) -> tuple[str, ...]:
    """The labels of the parallel workers `stage`'s planning worker hands over to, if any."""
    if PLAYBOOK.get(stage) is plan_probe_batch:
        return tuple(HELPER_PREFIX + c for c in PROBE_CANDIDATES)
    return ()


def plan_probe_collect(task: Task, h: History) -> list[Step]:
    return read_then_note(
        task,
        h,
        "cat idea/probes/*.md",
        "idea/probes/summary.md",
        probes.probe_summary_md,
        "Merged the probe results into idea/probes/summary.md.",
        feedback=False,
    )


def plan_setup(task: Task, h: History) -> list[Step]:
    return [
        *write_all("script", script_files("experiment/run_experiment.py")),
        write("plan", "experiment/plan.md", plans.experiment_plan_md(task.loops)),
        run("check", "python experiment/run_experiment.py --check"),
        complete(
            task,
            [
                "Wrote experiment/run_experiment.py (numpy MLP, fixed seeds) and "
                f"the plan ({task.loops} batch(es)).",
                "Smoke check: " + last_line(h.result("check")),
            ],
            ["experiment/plan.md", "experiment/run_experiment.py"],
            task.default_next,
        ),
    ]


def plan_search_results(task: Task, h: History) -> list[Step]:
    """The search stage's outputs once its search is over: the study's grid (the baseline the
    search is compared with) run in full, then the search reported from the tree."""
    report = "experiment/search_report.py"
    return [
        *write_all("script", {report: script_files(report)[report]}),
        run("grid", "python experiment/run_experiment.py"),
        run("report", shell_words("python", report)),
        complete(
            task,
            [
                "Ran the study's grid in full (the baseline): " + last_line(h.result("grid")),
                "Reported the search from experiment/tree.json: " + last_line(h.result("report")),
            ],
            [
                "experiment/results.csv",
                "experiment/log.md",
                "experiment/search.csv",
                "experiment/search.json",
            ],
            task.default_next,
        ),
    ]


def plan_loop(task: Task, h: History) -> list[Step]:
    if TREE_FILE in task.instructions:  # a search stage whose search is over
        return plan_search_results(task, h)
    k, n = task.visit, task.loops
    base = f"python experiment/run_experiment.py --batches {n}"
    outputs = ["experiment/results.csv", "experiment/log.md"]
    if k == 2:  # the long batch: a job; layer 2 resumes this worker when it has ended
        steps: list[Step] = [
            Act("submit", tools.SUBMIT, {"command": f"{base} --batch {k}", "name": f"batch-{k}"})
        ]
        if h.done("submit") and h.result("submit").startswith("Job not submitted"):
            steps.append(run("batch", f"{base} --batch {k}"))  # no job: run it here
            summary = [f"Ran batch {k} of {n} in the foreground (the job was refused)."]
        else:
            summary = [f"Ran batch {k} of {n} as the job batch-{k} (log jobs/batch-{k}.log)."]
        steps.append(run("check", f"{base} --status"))
        summary.append("Status: " + last_line(h.result("check")))
    else:
        steps = [run("batch", f"{base} --batch {k}")]
        summary = [f"Ran batch {k} of {n}: " + last_line(h.result("batch"))]
    summary.append("More batches remain." if k < n else "All batches done; ready for analysis.")
    again = task.stage if k < n else None  # one more visit of this stage for the next batch
    return [*steps, complete(task, summary, outputs, task.next_or_default(again))]


def script_stage(
    task: Task, target: str, args: tuple[str, ...], summary: str, outputs: list[str]
) -> list[Step]:
    """Write the script `target` (and the modules beside it), run it, complete the stage."""
    return [
        *write_all("script", script_files(target)),
        run("run", shell_words("python", target, *args)),
        complete(task, [summary], outputs, task.default_next),
    ]


def plan_experiment_gate(task: Task, h: History) -> list[Step]:
    return read_then_note(
        task,
        h,
        "cat experiment/summary.csv",
        "experiment/brief.md",
        briefs.experiment_brief_md,
        "Prepared the experiment decision brief from experiment/summary.csv.",
    )


def script_plan(target: str, summary: str, *outputs: str, goal_arg: bool = False) -> Plan:
    """A stage whose work is one script of the study, run (with the goal as its argument
    when `goal_arg`)."""
    return lambda task, h: script_stage(
        task, target, (task.goal,) if goal_arg else (), summary, list(outputs)
    )


def plan_analyze(task: Task, h: History) -> list[Step]:
    """Write the analysis notebook (its helper modules beside it) with the notebook tools, run
    it in a fresh kernel, complete the stage: the notebook computes experiment/summary.csv and
    writes experiment/analysis.md, and its cells show the table and the criterion."""
    modules = {path: text for path, text in analysis_files().items() if path != ANALYSIS}
    result = h.result("notebook")
    ran = result.startswith("ran ")
    summary = [
        f"Wrote {ANALYSIS} and ran it in a fresh kernel: it summarises every "
        "condition over seeds (mean, std, 95% CI) in experiment/summary.csv and "
        "experiment/analysis.md."
        if ran
        else f"{ANALYSIS} did not run: " + result.split("\n")[0]
    ]
    outputs = [ANALYSIS, "experiment/analysis.md", "experiment/summary.csv"]
    return [
        *write_all("module", modules),
        Act(
            "create",
            tools.NOTEBOOK_CREATE,
            {"path": ANALYSIS, "cells": notebook_cells("analysis.py")},
        ),
        Act("notebook", tools.NOTEBOOK_RUN, {"path": ANALYSIS}),
        complete(task, summary, outputs, task.default_next),
    ]


plan_figure = script_plan(
    "paper/figures/make_figures.py",
    "Drew figure 1 from the results with matplotlib; captions in paper/figures/captions.md.",
    "paper/figures/figure1.png",
    "paper/figures/captions.md",
)
PAPER_SOURCE = "paper/paper.tex"
REVISION_RESPONSE = "paper/response.md"


def plan_write(task: Task, h: History) -> list[Step]:
    """Write the paper's LaTeX source with paper/build_paper.py, build the PDF with the build
    tool (a machine without TeX keeps the source: the tool says so), complete the stage.

    Sent back by the reviewers (the task's feedback), the same script makes the changes the
    review round asks for (paper/paper_revision.py, from paper/reviews/meta.json) and says
    what it did for each in paper/response.md."""
    result = h.result("pdf")
    built = result.startswith("built ")
    revising = bool(task.feedback)
    summary = [
        f"Wrote {PAPER_SOURCE}; every number in it is read from experiment/summary.csv by "
        "paper/build_paper.py.",
        # its pages, not its build time: the same history gives the same reply
        "Built paper/paper.pdf from it." if built else "No PDF: " + result.split("\n")[0],
        # (not the script's line: it names the workspace's path, which a replay's differs in)
        *(
            ["Revised for the reviewers' required changes: paper/response.md says what was done."]
            if revising
            else []
        ),
    ]
    outputs = [
        PAPER_SOURCE,
        *(["paper/paper.pdf"] if built else []),
        *([REVISION_RESPONSE] if revising else []),
    ]
    return [
        *write_all("script", script_files("paper/build_paper.py")),
        run("run", shell_words("python", "paper/build_paper.py", task.goal)),
        Act("pdf", tools.BUILD_PDF, {"source": PAPER_SOURCE}),
        complete(task, summary, outputs, task.default_next),
    ]


plan_review = script_plan(
    "paper/check_paper.py",
    "Checked every number in the paper against experiment/summary.csv and wrote the review "
    "with the final decision brief.",
    "paper/review.md",
)


def note_plan(path: str, build: Callable[[str], str], *summary: str) -> Plan:
    """A stage whose work is one note written from the goal (`build(goal)`)."""
    return lambda task, h: note_stage(task, path, build(task.goal), list(summary))


def plan_survey(task: Task, h: History) -> list[Step]:
    found, cited = survey.found(h), survey.cited(h)
    searches, cites = survey.searches(), survey.cites(found)
    text = idea.survey_md(task.goal, found, cited)
    summary = [*survey.summary(found, cited), *offline_memory.recalled_line(h)]
    return [
        offline_memory.recall_step(),
        searches,
        *([cites] if cites else []),
        *note_stage(task, "idea/survey.md", text, summary),
    ]


plan_idea_gate = note_plan(
    "idea/brief.md",
    briefs.idea_brief_md,
    "Prepared the decision brief for the idea gate: the proposed study, its evidence, risks "
    "and success criterion.",
)
plan_paper_plan = note_plan(
    "paper/outline.md",
    plans.paper_outline_md,
    "Outlined the paper: question, method, results, limitations.",
)

PLAYBOOK: dict[str, Plan] = {
    "idea.survey": plan_survey,
    "idea.generate": plan_generate,
    "idea.evaluate": plan_evaluate,
    "idea.probe_batch": plan_probe_batch,
    "idea.probe_collect": plan_probe_collect,
    "idea.gate": plan_idea_gate,
    "experiment.setup": plan_setup,
    "experiment.loop": plan_loop,
    "experiment.analyze": plan_analyze,
    "experiment.gate": plan_experiment_gate,
    "paper.plan": plan_paper_plan,
    "paper.figure": plan_figure,
    "paper.write": plan_write,
    "paper.review": plan_review,
    LESSONS_STAGE: offline_memory.plan_lessons,
}
"""Stage id (as the default table names it) -> the plan the offline worker follows there."""


def plan_for(stage: str) -> Plan | None:
    return PLAYBOOK.get(stage)
