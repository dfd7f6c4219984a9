"""Time travel's store: the snapshots of a workspace as commits of the repository
`.lightscientist/history.git` (`snapshots`), their objects written in process
(`git_objects`), which files they keep (`files`, with the ignore rules of `ignore`).

A leaf below layer 1, which takes the snapshots as its effects; the operations on the
history (log, diff, rewind, fork) are `app.history`'s."""
