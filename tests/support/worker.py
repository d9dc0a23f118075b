"""Test support: a real `celery -A hooksite worker` process on the configured database and broker.

The worker consumes a queue of its own (so test runs never steal each other's messages) and
talks to the test database that pytest-django created. Tests that use it commit their data:
mark them ``django_db(transaction=True)``. Its sink deliveries go to the queue named after it
(``<queue>.sinks``), which a second process consumes with the threads pool, as Procfile.prod's
``sinks`` worker does: the ``worker`` fixture starts both.
"""

import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from celery import Celery
from django.conf import settings
from django.db import connection

from hooksite.celery import app as default_app

ROOT = Path(__file__).resolve().parents[2]
# Claims made by the test worker lapse quickly, so a test can sweep a crashed batch soon after.
WORKER_LEASE_SECONDS = 2
# Its judging messages are stopped soon too; the margin leaves room for the default hooks' 2 s.
WORKER_TIME_LIMIT = 10
WORKER_TIME_LIMIT_MARGIN = 1


def database_url():
    """A DATABASE_URL for the test database this process uses."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    user = db.get("USER") or ""
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    return f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


class Worker:
    """A worker process; ``restart()`` after ``kill()`` brings up a fresh one on the same queue.
    On the configured broker and cache, or on ``broker_url`` and the Redis at ``cache_url``."""

    def __init__(self, queue, log_dir, broker_url=None, cache_url=None):
        self.queue = queue
        self.log_path = Path(log_dir) / f"worker-{queue}.log"
        self.broker_url = broker_url
        self.cache_url = cache_url
        self.process = None

    def env(self):
        env = dict(os.environ)
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "tests.settings",
                "DATABASE_URL": database_url(),
                "SECRET_KEY": settings.SECRET_KEY,
                "STASH_VAR_DIR": str(settings.VAR_DIR),
                "STASH_QUEUE": self.queue,
                "STASH_SINK_QUEUE": sink_queue(self.queue),
                "STASH_LEASE_SECONDS": str(WORKER_LEASE_SECONDS),
                "STASH_TIME_LIMIT": str(WORKER_TIME_LIMIT),
                "STASH_TIME_LIMIT_MARGIN": str(WORKER_TIME_LIMIT_MARGIN),
                "PYTHONPATH": str(ROOT),
            }
        )
        if self.broker_url:
            env["CELERY_BROKER_URL"] = self.broker_url
        if self.cache_url:
            env["CACHE_URL"] = self.cache_url
        return env

    #: The pool and its size, as Procfile.prod's ``worker`` has them (2: `make run`'s).
    pool = ("--pool", "prefork", "--concurrency", "2")

    def start(self, timeout=60):
        self.log = open(self.log_path, "a")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "hooksite",
                "worker",
                "-Q",
                self.queue,
                *self.pool,
                "--loglevel",
                "INFO",
                "--without-mingle",
                "--without-gossip",
                "--hostname",
                f"{self.queue}@%h",
            ],
            cwd=ROOT,
            env=self.env(),
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"worker exited with {self.process.returncode}:\n{self.read_log()}")
            if " ready." in self.read_log():
                return self
            time.sleep(0.2)
        raise RuntimeError(f"worker not ready after {timeout}s:\n{self.read_log()}")

    def read_log(self):
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def child_pids(self):
        out = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True).stdout
        return [int(pid) for pid in out.split()]

    def kill(self):
        """SIGKILL the whole worker (main process and pool children): nothing gets to clean up."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        self.log.close()

    def stop(self):
        if self.process:
            stop_group(self.process, 20)
        self.log.close()

    def restart(self):
        self.stop()
        self.log_path.write_text("")
        return self.start()


def sink_queue(queue):
    """The queue of the sink deliveries of a worker on ``queue`` (``STASH_SINK_QUEUE``'s default)."""
    return f"{queue}.sinks"


#: Networks the test sink worker may post webhooks to: receivers in the test process listen on loopback.
SINK_ALLOWED_NETWORKS = "127.0.0.1/32"


class SinkWorker(Worker):
    """The sink deliveries' worker of a ``Worker`` on ``queue``: it consumes ``<queue>.sinks`` only,
    with the threads pool, as Procfile.prod's ``sinks`` worker does (the default 8 threads). Its
    webhooks may reach the test process's receivers on 127.0.0.1."""

    pool = ("--pool", "threads", "--concurrency", "8")

    def __init__(self, queue, log_dir, broker_url=None, cache_url=None):
        super().__init__(sink_queue(queue), log_dir, broker_url=broker_url, cache_url=cache_url)
        self.judging_queue = queue

    def env(self):
        return {
            **super().env(),
            "STASH_QUEUE": self.judging_queue,
            "STASH_SINK_QUEUE": self.queue,
            "STASH_WEBHOOK_ALLOWED_NETWORKS": SINK_ALLOWED_NETWORKS,
        }


def stop_group(process, timeout):
    """SIGTERM to ``judge``'s group (it was started in a session of its own), then SIGKILL after
    ``timeout`` seconds."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


@pytest.fixture(scope="session")
def worker_queue():
    return f"stash-test-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def _session_worker(django_db_setup, django_db_blocker, worker_queue, tmp_path_factory):
    worker = Worker(worker_queue, tmp_path_factory.mktemp("worker")).start()
    yield worker
    worker.stop()


@pytest.fixture(scope="session")
def _session_sink_worker(django_db_setup, django_db_blocker, worker_queue, tmp_path_factory):
    worker = SinkWorker(worker_queue, tmp_path_factory.mktemp("sink-worker")).start()
    yield worker
    worker.stop()


@pytest.fixture
def sink_worker(_session_sink_worker):
    """The running sink worker of ``worker``'s deliveries (started again if a test killed it)."""
    if _session_sink_worker.process.poll() is not None:
        _session_sink_worker.restart()
    return _session_sink_worker


@pytest.fixture
def worker(_session_worker, sink_worker, settings, worker_queue):
    """The running worker, and its sink worker; items saved in the test are sent to its queue."""
    settings.STASH_QUEUE = worker_queue
    settings.STASH_SINK_QUEUE = sink_worker.queue
    # Messages carry their time limit from the publisher: the test's, like the worker's.
    settings.STASH_TIME_LIMIT, settings.STASH_TIME_LIMIT_MARGIN = WORKER_TIME_LIMIT, WORKER_TIME_LIMIT_MARGIN
    if _session_worker.process.poll() is not None:  # a test killed it
        _session_worker.restart()
    return _session_worker


@contextmanager
def publishing_to(url):
    """Inside the block, this process publishes to the broker at ``url`` (a Celery app of its own,
    set as the current one), as a web process configured with that broker would."""
    publisher = Celery("hooksite", set_as_current=False)
    publisher.config_from_object("django.conf:settings", namespace="CELERY")
    # Read and write URLs: a CELERY_BROKER_URL in the environment outranks ``broker_url``.
    publisher.conf.update(broker_read_url=url, broker_write_url=url, broker_transport_options={})
    publisher.set_current()
    try:
        yield publisher
    finally:
        default_app.set_current()
        publisher.close()


def wait_for(predicate, timeout=30, interval=0.1, message="condition"):
    """Poll ``predicate`` until it returns a truthy value; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout}s waiting for {message}")
