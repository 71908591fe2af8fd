"""How long a container of a run-to-completion pod runs, and how it exits: a model convention.

The model runs no programs, so it cannot know when a container's process would end. A pod whose restartPolicy is
Always serves: its containers run until something stops them (a fault, a failed liveness probe, the pod's
deletion). A pod whose restartPolicy is Never or OnFailure (a Job's pod) runs to completion: each of its
containers ends by itself `run-seconds` after it started, with exit code `exit-code`, both read from the pod's
annotations (a Job's pod template carries them to every pod):

    kmodel.io/run-seconds   how long the process runs, in whole seconds (default 5)
    kmodel.io/exit-code     its exit code (default 0: success; anything else fails the container)

A value that is not a whole number in range counts as absent (the default). docs/differences.md lists the
convention.
"""

from __future__ import annotations

from typing import Optional

from kmodel.objects import Pod

RUN_SECONDS_ANNOTATION = "kmodel.io/run-seconds"
EXIT_CODE_ANNOTATION = "kmodel.io/exit-code"
DEFAULT_RUN_SECONDS = 5
#: the exit codes a process can have (an 8-bit status)
_EXIT_CODES = range(0, 256)
_RUN_TO_COMPLETION = ("Never", "OnFailure")


def _whole(text: Optional[str], allowed: range, default: int) -> int:
    if text is None or not text.isdigit():
        return default
    value = int(text)
    return value if value in allowed else default


def ends_at(pod: Pod, started_at: int) -> Optional[int]:
    """When a container of `pod` started at `started_at` ends by itself (None: it serves until stopped)."""
    if pod.spec.restart_policy not in _RUN_TO_COMPLETION:
        return None
    seconds = _whole(pod.metadata.annotations.get(RUN_SECONDS_ANNOTATION), range(0, 1 << 31), DEFAULT_RUN_SECONDS)
    return started_at + seconds * 1000


def exit_code(pod: Pod) -> int:
    """The exit code of a container of `pod` that ends by itself."""
    return _whole(pod.metadata.annotations.get(EXIT_CODE_ANNOTATION), _EXIT_CODES, 0)
