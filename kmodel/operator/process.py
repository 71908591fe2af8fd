"""The operator as a process of its own: started with KUBECONFIG set to a kubeconfig holding its user only, its
output appended to one log across its restarts, and signalled as a whole process group (SIGKILL, SIGSTOP,
SIGCONT, SIGTERM), so that whatever it started goes with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

#: how long a stopped operator gets between SIGTERM and SIGKILL
STOP_GRACE_S = 3.0


class OperatorProcess:
    def __init__(self, command: Sequence[str], kubeconfig: Path, log: Path) -> None:
        self.command = list(command)
        self.log = log
        # the interpreter's own folder first, so that `kopf` or `python` is this environment's
        path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig), "PATH": path, "PYTHONUNBUFFERED": "1"}
        self.popen: Optional[subprocess.Popen] = None
        self.starts = 0
        self.stopped = False  # SIGSTOP sent and no SIGCONT yet

    def start(self) -> None:
        self.starts += 1
        with self.log.open("a", encoding="utf-8") as out:
            out.write(f"--- kmodel: start #{self.starts}: {' '.join(self.command)}\n")
            out.flush()
            try:
                self.popen = subprocess.Popen(self.command, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                              stdin=subprocess.DEVNULL, start_new_session=True)
            except OSError as exc:
                raise OperatorStartError(f"cannot start {self.command[0]}: {exc.strerror or exc}") from None

    def note(self, line: str) -> None:
        """A line of the checker's own in the operator's log."""
        with self.log.open("a", encoding="utf-8") as out:
            out.write(f"--- kmodel: {line}\n")

    @property
    def pid(self) -> int:
        return self.popen.pid if self.popen is not None else -1

    def exit_code(self) -> Optional[int]:
        """None while it runs; its exit code (negative: the signal) once it ended."""
        return None if self.popen is None else self.popen.poll()

    def signal(self, sig: int) -> None:
        """Send `sig` to the operator's process group (nothing when it has ended)."""
        if self.popen is None or self.popen.poll() is not None:
            return
        try:
            os.killpg(self.popen.pid, sig)
        except ProcessLookupError:
            pass
        if sig == signal.SIGSTOP:
            self.stopped = True
        elif sig in (signal.SIGCONT, signal.SIGKILL):
            self.stopped = False

    def kill(self) -> None:
        """SIGKILL, and wait for it to be gone."""
        self.signal(signal.SIGKILL)
        if self.popen is not None:
            self.popen.wait()

    def stop(self) -> Optional[int]:
        """SIGCONT if paused, SIGTERM, SIGKILL after STOP_GRACE_S; its exit code."""
        if self.popen is None:
            return None
        if self.popen.poll() is None:
            self.signal(signal.SIGCONT)
            self.signal(signal.SIGTERM)
            try:
                self.popen.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self.kill()
        try:  # whatever it started and left behind
            os.killpg(self.popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return self.popen.returncode

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


class OperatorStartError(RuntimeError):
    """The operator could not be started, or did not become ready: one line saying why."""


def wait_until(condition, timeout_s: float, interval_s: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout_s
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval_s)
