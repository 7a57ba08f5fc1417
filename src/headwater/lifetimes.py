"""Child processes that end with the process that started them: `headwater up`'s server and
`headwater serve`'s workers get SIGTERM (and stop gracefully) when their parent ends in any way,
even killed outright, instead of running on alone and holding the port. Linux asks the kernel
(prctl's PR_SET_PDEATHSIG); elsewhere there is no such guard.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1  # prctl(2)


def end_with_parent(parent: int) -> None:
    """In a child of `parent`: SIGTERM to this process when `parent` ends (at once if it has
    already ended). On Linux; elsewhere nothing."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # the parent went before the guard was set
        os.kill(os.getpid(), signal.SIGTERM)


def ended_with_parent() -> Callable[[], None] | None:
    """For `subprocess.Popen(preexec_fn=...)`: the child ends with this process (Linux only;
    elsewhere None)."""
    if not sys.platform.startswith("linux"):
        return None
    parent = os.getpid()
    return lambda: end_with_parent(parent)
