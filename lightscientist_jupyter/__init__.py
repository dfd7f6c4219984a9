"""LightScientist for Jupyter: a research agent that runs inside a Jupyter kernel.

Layers (imports point down only): shells (`cli`, `jupyter`) → `controller` (layer 1) →
`supervisor` (layer 2) → `runtime` (layer 3); `events` is a side channel every layer may use.
"""

__version__ = "0.1.0"
