"""Start and stop gunicorn for the bench, and read its workers' CPU time from /proc.

Every wait is bounded and a server is always stopped (its whole process group), also when
the bench fails half-way.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """Return a TCP port nobody listens on now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def settings_env(database_url: str, static_root: Path | str, settings: str = "interview.settings") -> dict:
    """Return the environment of a production-like server: DEBUG off, plain HTTP, throttles out of the way."""
    env = {
        **os.environ,
        "DEBUG": "false",
        "SECRET_KEY": os.environ.get("SECRET_KEY") or "bench-" + "k" * 50,
        "HTTPS": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        "DATABASE_URL": database_url,
        "STATIC_ROOT": str(static_root),
        "DJANGO_SETTINGS_MODULE": settings,
        "PYTHONPATH": str(ROOT),
    }
    # The bench measures cost, not the rate limits: every throttle the settings read gets a huge rate.
    for scope in (
        "ANON",
        "USER",
        "ANSWERS",
        "LOGIN",
        "LOGIN_ACCOUNT_ADDRESS",
        "LOGIN_ACCOUNT",
        "PASSWORD_RESET",
        "PASSWORD_RESET_ACCOUNT",
    ):
        env[f"THROTTLE_{scope}"] = "10000000/min"
    return env


def wait_until_up(url: str, server: subprocess.Popen, timeout: float = 60) -> None:
    """Return once ``url`` answers 200; fail if the server exits or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {server.returncode} before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - a local URL
                if response.status == 200:
                    return
        except (OSError, urllib.error.HTTPError):
            time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not answer {url} within {timeout:.0f} s")


def stop(server: subprocess.Popen, timeout: float = 15) -> None:
    """Stop gunicorn and its workers: SIGTERM to the group, SIGKILL if it has not gone within ``timeout``."""
    if server.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=timeout)


@contextlib.contextmanager
def gunicorn(
    env: dict, workers: int = 2, app: str = "bench.floor_wsgi:application", access_log: Path | None = None
) -> Iterator[tuple[str, int]]:
    """Serve ``app`` with ``workers`` sync workers on a free port; yield its base URL and master pid.

    With ``access_log``, every request served is a line of that file (see ``served``).
    """
    port = free_port()
    logging = ["--access-logfile", str(access_log)] if access_log else []
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), app, "--workers", str(workers), "--bind", f"127.0.0.1:{port}",
         "--chdir", str(ROOT), "--log-level", "warning", "--timeout", "60", *logging],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_up(base + "/healthz", server)
        yield base, server.pid
    finally:
        stop(server)


def worker_pids(master: int) -> list[int]:
    """Return the pids of gunicorn's workers (the master's children)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                # The fields after the command name, which may hold spaces: state, ppid, ...
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == master:
                    pids.append(int(entry.name))
    return sorted(pids)


def cpu_seconds(pids: list[int]) -> float:
    """Return the user plus system CPU seconds the processes have used so far (utime + stime)."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime and stime, the 14th and 15th fields of stat
    return total / CLOCK_TICKS


def served(access_log: Path) -> int:
    """Return how many requests the server has answered: the lines of its access log."""
    return access_log.read_bytes().count(b"\n") if access_log.exists() else 0


def settle(access_log: Path, pids: list[int], quiet: float = 0.5, timeout: float = 120) -> None:
    """Wait until the server has answered what is queued: for ``quiet`` seconds nothing served, no CPU used."""
    deadline = time.monotonic() + timeout
    state = (served(access_log), cpu_seconds(pids))
    while time.monotonic() < deadline:
        time.sleep(quiet)
        now = (served(access_log), cpu_seconds(pids))
        if now[0] == state[0] and now[1] - state[1] < 0.02:  # idle sync workers wait in select(), using no CPU
            return
        state = now
