"""The Python API of a hand-over: do a stage yourself, then deliver it or give it back.

    >>> from lightscientist_jupyter import api
    >>> api.take("study")                                   # the current stage is yours
    >>> api.deliver("study", "Ran 12 runs on my cluster.")  # checked as a worker's finish

Each returns the `Handover` of `app.handoff.hand` (`accepted` False with every reason when a
deliver is refused). A step reaches this kernel's run at once, another process's run through
its inbox; with `resume_if_idle`, a project nobody runs is resumed here when the step set it
running again.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from lightscientist_jupyter.api.running import open_project, resume
from lightscientist_jupyter.app.handoff import Handover, Step, hand
from lightscientist_jupyter.vocab import ReplySource

Where = str | os.PathLike[str]


def _step(
    workspace: Where,
    step: Step,
    *,
    source: ReplySource,
    resume_if_idle: bool,
    stage: str | None = None,
    summary: str = "",
    next_stage: str | None = None,
    outputs: Sequence[str] = (),
) -> Handover:
    view = open_project(workspace)
    done = hand(
        view.workspace,
        step,
        stage=stage,
        summary=summary,
        next_stage=next_stage,
        outputs=outputs,
        source=source,
        live=view.controller_here(),
    )
    if done.resume and resume_if_idle:
        resume(view.workspace.root)  # with the session's defaults
    return done


def take(
    workspace: Where = ".", stage: str | None = None, *, source: ReplySource = ReplySource.API
) -> Handover:
    """Hand the current stage (or `stage`, when the project reaches it) to yourself: its
    workers are cancelled cooperatively (their files stay) and the project waits for you."""
    return _step(workspace, Step.TAKE, source=source, resume_if_idle=False, stage=stage)


def deliver(
    workspace: Where = ".",
    summary: str = "",
    next_stage: str | None = None,
    outputs: Sequence[str] = (),
    *,
    source: ReplySource = ReplySource.API,
    resume_if_idle: bool = False,
) -> Handover:
    """Deliver the stage you took: its required outputs must exist and `next_stage` must be
    allowed, exactly as for a worker's finish; the run goes on with workers."""
    return _step(
        workspace,
        Step.DELIVER,
        source=source,
        resume_if_idle=resume_if_idle,
        summary=summary,
        next_stage=next_stage,
        outputs=tuple(outputs),
    )


def give_back(
    workspace: Where = ".", *, source: ReplySource = ReplySource.API, resume_if_idle: bool = False
) -> Handover:
    """Return the stage you took to the workers; what you wrote is named in their task."""
    return _step(workspace, Step.GIVE_BACK, source=source, resume_if_idle=resume_if_idle)
