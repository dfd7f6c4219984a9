"""The offline model playing a worker: a small, real study carried out through tools.

Each stage of the default table has a plan: a function from the task and the history to the
next step. Steps write real files and run real commands (the scripts come from `study`), so
the results, the figure and the paper's numbers are genuine outputs of this workspace. A
stage the offline model does not know (a user's own table) gets an honest short note in each
required output and the stage's default next stage.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from lightscientist_jupyter.runtime.lifecycle import CANCEL_NOTICE
from lightscientist_jupyter.runtime.offline import study
from lightscientist_jupyter.runtime.offline.history import Act, History, Say, Step

PROBE_CANDIDATES = ("c1-linear-warmup", "c2-lr-sweep")
BUDGET_QUESTION = ("How much compute may the study use: 'small' (a few seconds per batch on a "
                   "laptop CPU) or 'full' (minutes)?")
MAX_STATUS_CHECKS = 20


class Task:
    """The fields of a worker's task header, typed."""

    def __init__(self, fields: dict[str, Any], loops: int):
        self.fields = fields
        self.stage = str(fields.get("stage", ""))
        self.goal = str(fields.get("goal", ""))
        self.skill = str(fields.get("skill", ""))
        self.label = str(fields.get("label", ""))
        self.visit = int(fields.get("visit") or 1)
        self.outputs = [str(o) for o in fields.get("outputs") or []]
        self.default_next = str(fields.get("default_next") or "")
        self.allowed = [str(a) for a in fields.get("allowed_next") or []]
        self.feedback = str(fields.get("feedback") or "")
        self.instructions = str(fields.get("instructions") or "")
        self.loops = max(1, loops)

    def next_or_default(self, preferred: str) -> str:
        return preferred if preferred in self.allowed else self.default_next


def write(label: str, path: str, content: str) -> Act:
    return Act(label, "write_file", {"file_path": "/" + path.lstrip("/"), "content": content})


def run(label: str, command: str, timeout: int | None = None) -> Act:
    args: dict[str, Any] = {"command": command}
    if timeout:
        args["timeout"] = timeout
    return Act(label, "execute", args)


def complete(task: Task, summary: list[str], outputs: list[str], next_stage: str) -> Act:
    lines = [*summary, "(Offline demo model; the study does not depend on the goal text.)"]
    return Act("complete", "complete_stage", {"summary": "\n".join(lines), "outputs": outputs,
                                              "next_stage": next_stage})


def with_feedback(task: Task, text: str) -> str:
    if not task.feedback:
        return text
    return (f"{text.rstrip()}\n\n## Reviewer feedback addressed\n\n> {task.feedback}\n\n"
            "This version was regenerated after the rejection above; the offline demo model "
            "records the feedback but cannot redesign the study around it.\n")


def last_line(output: str) -> str:
    """The last line a command printed, without the shell tool's own status footer."""
    lines = [line for line in output.strip().splitlines()
             if line.strip() and not line.startswith("[Command")]
    return lines[-1][:120] if lines else "(no output)"


def first_pending(history: History, steps: list[Step]) -> Step | None:
    for step in steps:
        acts = step if isinstance(step, list) else [step]
        if any(isinstance(a, Act) and not history.done(a.label) for a in acts):
            return [a for a in acts if not history.done(a.label)] if isinstance(step, list) else step
    return None


# ----------------------------------------------------------------------------- plans

def plan_survey(task: Task, h: History) -> list[Step]:
    return [write("write", "idea/survey.md", with_feedback(task, study.survey_md(task.goal))),
            complete(task, ["Wrote the background survey (no literature access offline; "
                            "stated plainly in the file).",
                            "Framed the question: does learning-rate warmup help plain "
                            "gradient descent train a small MLP?"],
                     ["idea/survey.md"], task.default_next)]


def plan_generate(task: Task, h: History) -> list[Step]:
    answer = h.result("ask").replace("Answer from the supervisor:", "").strip() or "small"
    return [Act("ask", "request_input", {"question": BUDGET_QUESTION}),
            write("write", "idea/candidates.md",
                  with_feedback(task, study.candidates_md(task.goal, answer))),
            complete(task, ["Proposed three candidate studies: " + ", ".join(
                ["c1-linear-warmup", "c2-lr-sweep", "c3-warmup-length"]) + ".",
                f"Compute budget agreed with the supervisor: {answer[:80]}."],
                ["idea/candidates.md"], task.default_next)]


def plan_evaluate(task: Task, h: History) -> list[Step]:
    probe = task.visit == 1 and "idea.probe_batch" in task.allowed
    nxt = "idea.probe_batch" if probe else task.next_or_default("idea.gate")
    return [write("write", "idea/evaluation.md", with_feedback(task, study.evaluation_md())),
            complete(task, ["Scored the three candidates for value, cost and risk.",
                            "c1 and c2 are close: " + ("a cheap probe will separate them."
                                                       if probe else "the probes decided.")],
                     ["idea/evaluation.md"], nxt)]


def plan_probe_batch(task: Task, h: History) -> list[Step]:
    if task.label.startswith("probe "):
        candidate = task.label.split(" ", 1)[1]
        script, note = f"idea/probes/{candidate}.py", f"idea/probes/{candidate}.md"
        return [write("write", script, study.probe_script(candidate)),
                run("run", f"python {shlex.quote(script)}"),
                complete(task, [f"Ran the probe for {candidate}; result in {note}."],
                         [note], task.default_next)]
    return [write("write", "idea/probes/plan.md", study.probe_plan_md(list(PROBE_CANDIDATES))),
            complete(task, ["Planned one probe per top candidate: "
                            + ", ".join(PROBE_CANDIDATES) + ".",
                            "The supervisor runs the probes as parallel workers."],
                     ["idea/probes/plan.md"], task.default_next)]


def plan_probe_collect(task: Task, h: History) -> list[Step]:
    return [run("read", "cat idea/probes/*.md"),
            write("write", "idea/probes/summary.md", study.probe_summary_md(h.result("read"))),
            complete(task, ["Merged the probe results into idea/probes/summary.md."],
                     ["idea/probes/summary.md"], task.next_or_default("idea.gate"))]


def plan_idea_gate(task: Task, h: History) -> list[Step]:
    return [write("write", "idea/brief.md", with_feedback(task, study.idea_brief_md(task.goal))),
            complete(task, ["Prepared the decision brief for the idea gate: the proposed "
                            "study, its evidence, risks and success criterion."],
                     ["idea/brief.md"], task.default_next)]


def plan_setup(task: Task, h: History) -> list[Step]:
    return [write("script", "experiment/run_experiment.py", study.RUN_EXPERIMENT_PY),
            write("plan", "experiment/plan.md", study.experiment_plan_md(task.loops)),
            run("check", "python experiment/run_experiment.py --check"),
            complete(task, ["Wrote experiment/run_experiment.py (numpy MLP, fixed seeds) and "
                            f"the plan ({task.loops} batch(es)).",
                            "Smoke check: " + last_line(h.result("check"))],
                     ["experiment/plan.md", "experiment/run_experiment.py"], task.default_next)]


def plan_loop(task: Task, h: History) -> list[Step]:
    k, n = task.visit, task.loops
    nxt = "experiment.loop" if k < n else "experiment.analyze"
    base = f"python experiment/run_experiment.py --batches {n}"
    outputs = ["experiment/results.csv", "experiment/log.md"]
    if k == 2:  # the long batch: start it in the background, suspend, check later
        steps: list[Step] = [
            run("launch", f"nohup {base} --batch {k} > experiment/batch-{k}.out 2>&1 &")]
        i = 1
        while True:
            steps += [Act(f"suspend{i}", "suspend", {"reason": f"batch {k} is running in the "
                                                     "background", "check_after_s": 1}),
                      run(f"check{i}", f"{base} --status")]
            if (not h.done(f"check{i}") or f"batch {k}: done" in h.result(f"check{i}")
                    or i >= MAX_STATUS_CHECKS):
                break
            i += 1
        summary = [f"Ran batch {k} of {n} in the background and checked on it after a "
                   "suspension."]
    else:
        steps = [run("batch", f"{base} --batch {k}")]
        summary = [f"Ran batch {k} of {n}: " + last_line(h.result("batch"))]
    summary.append("More batches remain." if k < n else "All batches done; ready for analysis.")
    return [*steps, complete(task, summary, outputs, task.next_or_default(nxt))]


def plan_analyze(task: Task, h: History) -> list[Step]:
    return [write("script", "experiment/analyze.py", study.ANALYZE_PY),
            run("run", "python experiment/analyze.py"),
            complete(task, ["Summarised every condition over seeds (mean, std, 95% CI) in "
                            "experiment/summary.csv and experiment/analysis.md."],
                     ["experiment/analysis.md", "experiment/summary.csv"],
                     task.next_or_default("experiment.gate"))]


def plan_experiment_gate(task: Task, h: History) -> list[Step]:
    return [run("read", "cat experiment/summary.csv"),
            write("write", "experiment/brief.md",
                  with_feedback(task, study.experiment_brief_md(h.result("read")))),
            complete(task, ["Prepared the experiment decision brief from experiment/summary.csv."],
                     ["experiment/brief.md"], task.default_next)]


def plan_paper_plan(task: Task, h: History) -> list[Step]:
    return [write("write", "paper/outline.md", with_feedback(task, study.paper_outline_md(task.goal))),
            complete(task, ["Outlined the paper: question, method, results, limitations."],
                     ["paper/outline.md"], task.default_next)]


def plan_figure(task: Task, h: History) -> list[Step]:
    return [write("script", "paper/figures/make_figures.py", study.MAKE_FIGURES_PY),
            run("run", "python paper/figures/make_figures.py"),
            complete(task, ["Drew figure 1 from the results with matplotlib; captions in "
                            "paper/figures/captions.md."],
                     ["paper/figures/figure1.png", "paper/figures/captions.md"], task.default_next)]


def plan_write(task: Task, h: History) -> list[Step]:
    return [write("script", "paper/build_paper.py", study.BUILD_PAPER_PY),
            run("run", f"python paper/build_paper.py {shlex.quote(task.goal)}"),
            complete(task, ["Wrote paper/paper.md; every number in it is read from "
                            "experiment/summary.csv by paper/build_paper.py."],
                     ["paper/paper.md"], task.next_or_default("paper.review"))]


def plan_review(task: Task, h: History) -> list[Step]:
    return [write("script", "paper/check_paper.py", study.CHECK_PAPER_PY),
            run("run", "python paper/check_paper.py"),
            complete(task, ["Checked every number in the paper against experiment/summary.csv "
                            "and wrote the review with the final decision brief."],
                     ["paper/review.md"], task.default_next)]


def plan_unknown(task: Task, h: History) -> list[Step]:
    steps: list[Step] = [Act("skill", "read_file", {"file_path": task.skill})] if task.skill else []
    for i, out in enumerate(task.outputs):
        steps.append(write(f"out{i}", out, study.unknown_stage_note(task.stage, task.goal, out)
                           if hasattr(study, "unknown_stage_note") else
                           f"# {task.stage}\n\nLightScientist's offline demo model does not know "
                           f"the stage '{task.stage}'. It read the stage's skill file and wrote "
                           "this note so the flow can continue; nothing here is a research "
                           "result.\n"))
    steps.append(complete(task, [f"Offline demo model: wrote a placeholder note for each "
                                 f"required output of the unknown stage '{task.stage}'."],
                          task.outputs, task.default_next))
    return steps


PLANS: dict[str, Callable[[Task, History], list[Step]]] = {
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
}


def decide_worker(fields: dict[str, Any], h: History, loops: int) -> Step:
    task = Task(fields, loops)
    if h.last_human.startswith(CANCEL_NOTICE[:40]):
        if not h.done("finalize"):
            return Act("finalize", "finalize_cancel", {
                "notes": f"Offline worker for {task.stage} stopped on request after "
                         f"{len(h.results)} tool call(s); the files it wrote stay in the "
                         "workspace."})
        return Say("Cancelled.")
    plan = PLANS.get(task.stage, plan_unknown)
    steps = plan(task, h)
    if task.stage in PLANS and task.skill and not task.label.startswith("probe "):
        steps = [Act("skill", "read_file", {"file_path": task.skill}), *steps]
    step = first_pending(h, steps)
    return step if step is not None else Say("Stage work delivered.")
