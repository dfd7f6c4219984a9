"""Jobs: a worker's long command, run apart from its turn until it ends. The `JobManager`
(`manager`) hands each job to a backend through the `JobBackend` Protocol (`backend`): this
machine (`local`) or a Ray cluster (`ray`); `record` is a job's file, `limit` its longest
time, `tools` the workers' job tools."""
