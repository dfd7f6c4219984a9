"""The `%lightscientist` magic: its subcommands, parsed and run in the kernel.

`magics` holds the magic itself (the table of subcommands, the `%config` traits and the
IPython extension hooks); the other modules are the handlers of one family of subcommands
each (`events`, `handoff`, `history`, `jobs`, `literature`, `tree`, `usage`) over the kernel's
`session`. `%load_ext lightscientist_jupyter` reaches the hooks re-exported here.
"""

from lightscientist_jupyter.jupyter.magic.magics import (
    LightScientistMagics,
    load_ipython_extension,
    unload_ipython_extension,
)

__all__ = ["LightScientistMagics", "load_ipython_extension", "unload_ipython_extension"]
