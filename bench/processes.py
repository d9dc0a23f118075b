"""The real processes a benchmark runs against: a Celery worker, gunicorn, and wrk as the load generator.

    worker = Worker(env, queues=["stash-x", "bench-x"], log_dir=path).start()
    web = WebServer(env, log_dir=path).start()
    figures = run_wrk(web.url("/bench/items/"), seconds=10, env={"BENCH_TOKEN": token})
    worker.rss_kb(); web.stop(); worker.stop()

Each is started in a session of its own and stopped by its process group, so nothing it forked
outlives the run. A process that fails to come up raises ``ProcessError`` with its log.
"""

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from pathlib import Path

from .errors import BenchError

ROOT = Path(__file__).resolve().parents[1]
WRK_SCRIPT = Path(__file__).with_name("post.lua")
WORKER_CONCURRENCY = 2
WEB_WORKERS = 2
WRK_THREADS = 2
WRK_CONNECTIONS = 16


class ProcessError(BenchError):
    """A process did not start, or a load run went wrong."""


class Process(ABC):
    """A child process with its output in ``<log_dir>/<name>.log``."""

    name = "process"

    def __init__(self, env, log_dir):
        self.env = env
        self.log_path = Path(log_dir) / f"{self.name}.log"
        self.process = None
        self.log_offset = 0

    @abstractmethod
    def command(self):
        """The command line that starts the process."""

    @abstractmethod
    def is_ready(self):
        """True once the process can take work."""

    def start(self, timeout=90):
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "a") as log:
            self.process = subprocess.Popen(
                self.command(), cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ProcessError(f"{self.name} exited with {self.process.returncode}:\n{self.log_tail()}")
            if self.is_ready():
                return self
            time.sleep(0.2)
        self.stop()
        raise ProcessError(f"{self.name} not ready after {timeout}s:\n{self.log_tail()}")

    def read_log(self):
        """What the process has logged since it was last started."""
        if not self.log_path.exists():
            return ""
        with open(self.log_path, "rb") as log:
            log.seek(self.log_offset)
            return log.read().decode(errors="replace")

    def log_tail(self, lines=40):
        return "\n".join(self.read_log().splitlines()[-lines:])

    def stop(self):
        """SIGTERM the process group; SIGKILL it if it has not ended 20 s later."""
        for sig, grace in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
            if self.process is None or self.process.poll() is not None:
                return
            os.killpg(self.process.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(grace)


_RECEIVED = re.compile(r"Task \S+\[([0-9a-f-]+)\] received")
_FINISHED = re.compile(r"Task \S+\[([0-9a-f-]+)\] (?:succeeded|raised|failed|retry)")


class Worker(Process):
    """``celery -A hooksite worker``, prefork, concurrency 2, consuming ``queues``."""

    name = "worker"

    def __init__(self, env, queues, log_dir):
        super().__init__(env, log_dir)
        self.queues = queues
        self._scanned = 0
        self._unfinished = set()

    def start(self, timeout=90):
        self._unfinished = set()
        started = super().start(timeout)
        self._scanned = self.log_offset
        return started

    def unfinished(self):
        """Ids of the tasks the worker has received and not yet finished, read from its log."""
        with open(self.log_path, "rb") as log:
            log.seek(self._scanned)
            chunk = log.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self._scanned += len(complete)
        text = complete.decode(errors="replace")
        self._unfinished |= set(_RECEIVED.findall(text))
        self._unfinished -= set(_FINISHED.findall(text))
        return self._unfinished

    def wait_idle(self, queued, timeout=600):
        """Wait until ``queued()`` (messages waiting in the worker's queues) is 0 and no task runs, twice
        in a row 0.2 s apart (a message taken but not yet logged as received is caught the second time)."""
        deadline = time.monotonic() + timeout
        idle_checks = 0
        while idle_checks < 2:
            if time.monotonic() > deadline:
                raise ProcessError(f"worker still busy after {timeout}s: {len(self._unfinished)} tasks running")
            idle = not queued() and not self.unfinished()
            idle_checks = idle_checks + 1 if idle else 0
            time.sleep(0.2)

    def command(self):
        return [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "hooksite",
            "worker",
            "--concurrency",
            str(WORKER_CONCURRENCY),
            "--pool",
            "prefork",
            "-Q",
            ",".join(self.queues),
            "--without-mingle",
            "--without-gossip",
            "--loglevel",
            "INFO",
            "--hostname",
            f"{self.queues[0]}@%h",
        ]

    def is_ready(self):
        return " ready." in self.read_log()

    def pids(self):
        """The main process and its pool children."""
        out = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True).stdout
        return [self.process.pid, *map(int, out.split())]

    def rss_kb(self):
        """Resident memory of the main process and its pool children, in KiB (VmRSS)."""
        return sum(vm_rss_kb(pid) for pid in self.pids())


class SinkWorker(Worker):
    """The sink deliveries' worker, as Procfile.prod's ``sinks`` runs it: the threads pool, 8 threads,
    consuming ``queue`` (``STASH_SINK_QUEUE``) only. A delivery waits on its receiver, not on the
    CPU, so one process with threads makes many at once."""

    name = "sinks"
    threads = 8

    def __init__(self, env, queue, log_dir):
        super().__init__(env, [queue], log_dir)

    def command(self):
        return [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "hooksite",
            "worker",
            "--concurrency",
            str(self.threads),
            "--pool",
            "threads",
            "-Q",
            self.queues[0],
            "--without-mingle",
            "--without-gossip",
            "--loglevel",
            "INFO",
            "--hostname",
            f"{self.queues[0]}@%h",
        ]


def vm_rss_kb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class WebServer(Process):
    """gunicorn with two sync workers on a free local port, serving ``hooksite.wsgi``."""

    name = "gunicorn"

    def __init__(self, env, log_dir):
        super().__init__(env, log_dir)
        self.port = free_port()

    def command(self):
        return [
            sys.executable,
            "-m",
            "gunicorn",
            "hooksite.wsgi:application",
            "--workers",
            str(WEB_WORKERS),
            "--worker-class",
            "sync",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--log-level",
            "warning",
        ]

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def is_ready(self):
        try:
            with urllib.request.urlopen(self.url("/healthz"), timeout=5) as response:
                return response.status == 200
        except (OSError, urllib.error.URLError):
            return False


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_wrk(url, seconds, env):
    """Run wrk with ``post.lua`` against ``url``; return its figures (see the script's ``done``).

    ``env`` passes the script its settings (``BENCH_TOKEN``, ``BENCH_STASH``). Raises
    ``ProcessError`` if wrk fails, or any response was not a 2xx, or any socket error occurred.
    """
    command = [
        "wrk",
        "-t",
        str(WRK_THREADS),
        "-c",
        str(WRK_CONNECTIONS),
        "-d",
        f"{seconds}s",
        "--timeout",
        "10s",
        "--latency",
        "-s",
        str(WRK_SCRIPT),
        url,
    ]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **env}, timeout=seconds + 60)
    lines = [line for line in done.stdout.splitlines() if line.startswith("wrk-result ")]
    if done.returncode or not lines:
        raise ProcessError(f"wrk failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    figures = json.loads(lines[-1].removeprefix("wrk-result "))
    errors = {key: figures[key] for key in ("non_2xx", "connect", "read", "write", "timeout") if figures[key]}
    if errors or not figures["requests"]:
        raise ProcessError(f"wrk against {url}: {figures['requests']} requests, errors {errors}:\n{done.stdout}")
    return figures
