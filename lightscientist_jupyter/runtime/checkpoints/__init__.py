"""Where sessions keep their LangGraph checkpoints and what goes into them: the saver for a
checkpoint URL (`url`, `sqlite`), a guard that notices a database gone away (`saver_guard`),
the redaction of tool results before they are checkpointed (`redacting`) and the pruning of
settled threads (`prune`)."""
