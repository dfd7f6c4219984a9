"""The offline scientist: a deterministic chat model that drives LightScientist with no API key.

It plays both the workers and the supervisor of the default stage table through their real
tools, carrying out one small, real study (`offline.study`). Nothing in the package imports
it except the model resolver (`runtime.models.resolver`), lazily, when the model `offline` is asked
for. It knows no stage table and no tool list of its own: stage ids come from the task it is given
(its playbook is keyed by them), tool names from the tools bound to it.
"""
