"""The one way the kernel touches a workspace: beneath its root, through no link.

Worker commands run sandboxed, but they can write anything into the workspace, links
included, and the kernel (the controller, the supervisor, the tools, the job runner, the
snapshots) runs unsandboxed. A link planted at `PROCESS.md`, `jobs/x.log` or in a folder's
place would make the kernel write or read through it, outside the workspace, with the user's
rights. So every path the kernel opens in a workspace is resolved here:

- with Linux's `openat2(2)` and `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`
  from the root's file descriptor, so the kernel itself refuses `..` out and any link, at any
  component, atomically;
- where `openat2` is missing (older kernels, some seccomp filters), one component at a time
  with `O_NOFOLLOW` and `dir_fd`, which gives the same guarantee without the single call.

Files are opened non-blocking first and must be regular files (a named pipe planted at
`PROCESS.md` would hang the kernel's read); appends refuse a file with more than one name.
New files are created with `O_EXCL`; atomic writes create a temporary file in the target's
folder and rename it over the target (a rename replaces a link, it never follows one).

A refusal is `PathRefused`, a `PermissionError` whose one-line message names the file and
what was found there, so a caller that already handles `OSError` reports it as it would a
missing or unreadable file.
"""

from lightscientist_jupyter.beneath.files import Beneath
from lightscientist_jupyter.beneath.opening import PathRefused

__all__ = ["Beneath", "PathRefused"]
