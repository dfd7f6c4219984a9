"""The offline worker playing one node of a search stage: a draft, an improvement or a fix.

Layer 2 starts one worker per node of a search stage, its task header naming the node (`node`,
`node_kind`, `node_parent`, `node_dir`, `parent_dir`, `result_file`, `metric`…). The worker
writes the node's files under `node_dir` (a draft from `study.nodes.DRAFTS`; an improvement
copies its parent's files and edits one setting line; a fix copies the failed parent's files
and edits the line its traceback names), runs the node's script as a job that writes
`result_file`, and completes with a summary of what it did and how the job ended. Layer 2
reads the metric from `result_file`, never from this summary.
"""

from __future__ import annotations

import re

from lightscientist_jupyter.offline import tools
from lightscientist_jupyter.offline.history import Act, History, Step
from lightscientist_jupyter.offline.steps import Task, complete, last_line, run, write
from lightscientist_jupyter.offline.study import nodes
from lightscientist_jupyter.offline.study.files import script_text

NODE_PREFIX = "node "
"""Label prefix of the workers layer 2 starts for a search stage's nodes (`node n003`)."""
DESIGN = "study_design.py"

_ENDED = re.compile(r"Job (?P<name>\S+) \([^)]*\): (?P<status>\w+); exit code (?P<code>\S+);")
_LOG = re.compile(r"jobs/[\w.-]+\.log")
_TREE_KEY = re.compile(r'"(id|parent|kind)": ("[^"]*"|null)')


def is_node(task: Task) -> bool:
    """Whether the task is one node of a search stage."""
    return bool(task.fields.get("node")) or task.label.startswith(NODE_PREFIX)


class NodeTask:
    """The node fields of a task header."""

    def __init__(self, task: Task):
        f = task.fields
        self.task = task
        self.id = str(f.get("node") or task.label.removeprefix(NODE_PREFIX)).strip()
        self.kind = str(f.get("node_kind") or "draft")
        self.parent = str(f.get("node_parent") or "")
        self.dir = str(f.get("node_dir") or f"experiment/tree/{self.id}").rstrip("/")
        self.parent_dir = str(f.get("parent_dir") or f"experiment/tree/{self.parent}").rstrip("/")
        self.result_file = str(f.get("result_file") or f"{self.dir}/result.json")
        self.parent_summary = str(f.get("parent_summary") or "")
        self.script = f"{self.dir}/{nodes.SCRIPT}"
        self.job = f"node-{self.id}"

    @property
    def number(self) -> int:
        digits = re.sub(r"\D", "", self.id)
        return int(digits) if digits else 1

    @property
    def command(self) -> str:
        return f"python {self.script} {self.result_file}"

    def files(self) -> list[str]:
        return [self.script, f"{self.dir}/{DESIGN}"]

    def copy_parent(self) -> Act:
        """The parent's script and design copied into this node's folder (not its result)."""
        sources = " ".join(f"{self.parent_dir}/{name}" for name in (nodes.SCRIPT, DESIGN))
        return run("copy", f"mkdir -p {self.dir} && cp {sources} {self.dir}/")


def output_of(result: str) -> str:
    """A command's output without the shell tool's status lines."""
    lines = result.rstrip().splitlines()
    while lines and lines[-1].startswith(("[Command", "[Output")):
        lines.pop()
    return "\n".join(lines)


def edit(label: str, path: str, old: str, new: str) -> Act:
    return Act(
        label,
        tools.EDIT,
        {"file_path": "/" + path.lstrip("/"), "old_string": old, "new_string": new},
    )


def run_job(node: NodeTask, h: History) -> tuple[list[Step], str, bool]:
    """The steps that run the node's script as a job (in the foreground when no job may be
    started), a line on how it ended, and whether it ended well."""
    steps: list[Step] = [Act("submit", tools.SUBMIT, {"command": node.command, "name": node.job})]
    if h.done("submit") and h.result("submit").startswith("Job not submitted"):
        steps.append(run("run", node.command))
        out = h.result("run")
        ok = "exit code 0" in out or not re.search(r"exit code [1-9]", out)
        return steps, f"Ran `{node.command}` in the foreground: {last_line(out)}", ok
    ended = _ENDED.search(h.last_human)
    tail = last_line(h.last_human.rsplit("```", 1)[0]) if "```" in h.last_human else ""
    if ended is None:
        return steps, f"Job {node.job}: no end reported.", False
    ok = ended["code"] == "0"
    line = (
        f"Job {node.job} {ended['status']} (exit code {ended['code']}; log jobs/{node.job}.log)"
        f": {tail}"
    )
    return steps, line, ok


def finish(node: NodeTask, h: History, head: list[str], steps: list[Step]) -> list[Step]:
    """`steps`, the job, then complete with `head` and how the job ended."""
    job, line, ok = run_job(node, h)
    files = node.files() + ([node.result_file] if ok else [])
    summary = [*head, line]
    return [*steps, *job, complete(node.task, summary, files, node.task.default_next)]


def plan_draft(node: NodeTask, h: History) -> list[Step]:
    settings, text = nodes.draft_text(node.number)
    writes = [
        write("script", node.script, text),
        write("design", f"{node.dir}/{DESIGN}", script_text(DESIGN)),
    ]
    head = [f"Draft {node.id}: {settings.describe()} ({node.script})."]
    return finish(node, h, head, [writes])


def plan_improve(node: NodeTask, h: History) -> list[Step]:
    reads: list[Act] = [
        # the nodes' ids, parents and kinds only: no times, so a replay reads the same
        run("tree", "grep -E '^ *\"(id|parent|kind)\": ' experiment/tree.json"),
        run("parent", f"cat {node.parent_dir}/{nodes.SCRIPT}"),
    ]
    if not all(h.done(a.label) for a in reads):
        return [reads]
    try:
        parent_text = output_of(h.result("parent"))
        before = nodes.settings_of(parent_text)
    except ValueError as exc:
        return [reads, _give_up(node, f"could not read the parent's settings: {exc}")]
    move, after = nodes.choose_move(before, _improvements_before(node, h.result("tree")))
    old = nodes.setting_line(parent_text, move.setting)
    new = nodes.with_value(old, move.setting, after)
    head = [
        f"Improvement {node.id} of {node.parent}: {move.name} ({move.setting} "
        f"{nodes.value_text(move.setting, before)} -> {nodes.value_text(move.setting, after)}),"
        f" because {move.why}.",
        f"Settings: {after.describe()}.",
    ]
    return finish(node, h, head, [reads, node.copy_parent(), edit("edit", node.script, old, new)])


def _improvements_before(node: NodeTask, tree_output: str) -> int:
    """How many improvements of this node's parent the tree lists before this node (read from
    the tree's `"id"`, `"parent"` and `"kind"` lines, in the order the tree holds them)."""
    listed: list[dict[str, str | None]] = []
    for key, value in _TREE_KEY.findall(output_of(tree_output)):
        if key == "id":
            listed.append({})
        if listed:
            listed[-1][key] = None if value == "null" else value.strip('"')
    return sum(
        1
        for n in listed
        if n.get("parent") == node.parent
        and n.get("kind") == "improve"
        and str(n.get("id") or "") < node.id
    )


def plan_debug(node: NodeTask, h: History) -> list[Step]:
    logs = _LOG.findall(node.parent_summary)
    log = logs[-1] if logs else f"jobs/node-{node.parent}.log"
    reads: list[Act] = [
        run("parent", f"cat {node.parent_dir}/{nodes.SCRIPT}"),
        run("log", f"cat {log}"),
    ]
    if not all(h.done(a.label) for a in reads):
        return [reads]
    fix = nodes.fix_for(output_of(h.result("log")), output_of(h.result("parent")))
    if fix is None:
        return [reads, _give_up(node, f"{log} shows no error this model knows how to fix")]
    old, new, what = fix
    head = [
        f"Fix {node.id} of {node.parent}: {what} (from the traceback in {log}).",
        f"Edited {node.script}: `{old.strip()}` -> `{new.strip()}`.",
    ]
    return finish(node, h, head, [reads, node.copy_parent(), edit("edit", node.script, old, new)])


def _give_up(node: NodeTask, why: str) -> Act:
    return complete(
        node.task,
        [f"Node {node.id} ({node.kind}): ran nothing, {why}."],
        [],
        node.task.default_next,
    )


def plan_node(task: Task, h: History) -> list[Step]:
    """The steps of a node task, by its kind."""
    node = NodeTask(task)
    plan = {"improve": plan_improve, "debug": plan_debug}.get(node.kind, plan_draft)
    return plan(node, h)
