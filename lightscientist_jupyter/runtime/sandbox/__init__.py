"""Where a worker's commands run and what they may touch: the workspace file backend
(`sandbox`), the process-group shell, how a command is started (`spawn`) in its bubblewrap
sandbox (`bwrap`) with its own network (`netstack`), control groups and environment, and
ending a command's whole process tree (`proctree`)."""
