"""Runs a harness so that every process it starts ends with it, on Linux: `python _reaper.py
STATUS_FD ARGV...`, started by `conformance._process` (with the standard library only, and `-I -S`,
so that it starts in milliseconds).

A harness's process group is not enough: a process it starts may leave the group (a new session,
`setsid`, or a daemon's double fork) and, orphaned, be adopted by init, out of the suite's reach.
This process marks itself a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`, unprivileged since
Linux 3.4), so every orphan below it is adopted here instead; it starts the harness on its own
stdio, and when the harness exits, when it is sent SIGTERM (the suite ending the harness) or when
the harness's stdin has no writer left (the suite is gone, even killed), it kills every process
below it and exits as the harness did. Whether the harness could be started is written on
STATUS_FD (nothing, then end of file: it started).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import select
import signal
import subprocess
import sys
import time

#: From linux/prctl.h.
PR_SET_CHILD_SUBREAPER = 36
#: Seconds to keep killing what is left below before giving up on an unkillable process.
ENDING_TIME = 5.0


def _adopt_orphans() -> str | None:
    """Become the subreaper of everything below; None, or why not."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return os.strerror(ctypes.get_errno())
    except (OSError, AttributeError) as exc:
        return str(exc)
    return None


def _descendants() -> list[int]:
    """Every live process below this one, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        if fields[0] not in ("Z", "X"):
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, below = [], [os.getpid()]
    while below:
        for child in children.get(below.pop(), []):
            found.append(child)
            below.append(child)
    return found


def _reap() -> bool:
    """Reap every ended child; whether any is still running."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def _end_everything_below() -> None:
    deadline = time.monotonic() + ENDING_TIME
    while time.monotonic() < deadline:
        for pid in _descendants():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if not _reap():  # every process below is adopted here: none left, all ended
            return
        time.sleep(0.01)


def _exit_as(status: int) -> None:
    """Exit with the harness's status: its code, or the signal that ended it."""
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the harness's crash, not ours
        with contextlib.suppress(OSError, ValueError):  # SIGKILL's action cannot be set
            signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def main(status_fd: int, argv: list[str]) -> None:
    why_not = _adopt_orphans()
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    ending: list[int] = []
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, lambda signum, frame: ending.append(signum))
    pipe = os.environ.get("REACT_CONFORMANCE_PROTOCOL_FD")  # conformance._protocol.PROTOCOL_FD
    given = (int(pipe),) if pipe and pipe.isdigit() else ()
    try:
        # On this process's stdio and the protocol pipe, and nothing else.
        harness = subprocess.Popen(argv, pass_fds=given)
    except OSError as exc:
        os.write(status_fd, str(exc).encode("utf-8", "replace"))
        os._exit(127)
    os.close(status_fd)
    for fd in given:  # the pipe ends with the harness
        os.close(fd)
    if why_not is not None:
        print(f"react-conformance: the processes this harness starts in a session of their own "
              f"may outlive it: prctl(PR_SET_CHILD_SUBREAPER) failed ({why_not})",
              file=sys.stderr, flush=True)
    with open(os.devnull, "wb") as null:  # the harness's stdout ends with the harness
        os.dup2(null.fileno(), 1)
    watch = select.poll()
    watch.register(wake_read, select.POLLIN)
    watch.register(0, 0)  # POLLHUP: no writer left on the harness's stdin, the suite is gone
    status: int | None = None
    while status is None and not ending:
        events = watch.poll()
        if any(fd == 0 for fd, _ in events):
            break
        with contextlib.suppress(BlockingIOError):
            os.read(wake_read, 512)
        while True:
            try:
                pid, code = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == harness.pid:
                status = code
    if status is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(harness.pid, signal.SIGKILL)
        _, status = os.waitpid(harness.pid, 0)
    _end_everything_below()
    _exit_as(status)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2:])
