"""The composition root: a project wired from its workspace, and the commands every front
door shares (see `commands`). The shells (command line, magic, server) and the Python API
sit above it; layer 1 below."""
