"""Fixtures of the chaos suite: its workers, its own Redis server, and the figures of each scenario.

``STASH_CHAOS_SCALE=long`` (``make chaos``) runs more items; the short run is part of ``make test``.
``STASH_CHAOS_FIGURES=<path>`` writes the figures as JSON for ``tests.chaos.report``.
"""

import json
import os
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from ..support.worker import WORKER_TIME_LIMIT, WORKER_TIME_LIMIT_MARGIN, publishing_to
from .ledger import Scenario
from .processes import LEASE_SECONDS, ChaosWorker, RedisServer

FIGURES = []  # every settled scenario's Figures, in the order they ran


def pytest_configure(config):
    config.addinivalue_line("markers", "chaos: a fault scenario (real worker processes; `make chaos` runs them long)")


def pytest_sessionfinish(session):
    path = os.environ.get("STASH_CHAOS_FIGURES")
    if path and FIGURES:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps([figures.as_dict() for figures in FIGURES], indent=2))


def pytest_terminal_summary(terminalreporter):
    if not FIGURES:
        return
    terminalreporter.section("chaos figures")
    terminalreporter.write_line(
        f"{'scenario':58} {'backend':10} {'items':>5} {'lost':>4} {'twice':>5} "
        f"{'wrong':>5} {'queue':>5} {'recovery s':>10} {'restarts':>8}"
    )
    for f in FIGURES:
        recovery = "-" if f.recovery_seconds is None else f"{f.recovery_seconds:.1f}"
        terminalreporter.write_line(
            f"{f.scenario:58} {f.backend:10} {f.items:5} {f.lost:4} {f.judged_twice:5} "
            f"{f.wrong:5} {f.queue_faults:5} {recovery:>10} {f.worker_restarts:8}"
        )
        if f.measured:
            terminalreporter.write_line("    " + ", ".join(f"{name} {value}" for name, value in f.measured.items()))


@pytest.fixture
def chaos(request, make_stash, settings):
    """The scenario of this test: submit items, mark the fault's end, settle and check."""
    settings.STASH_LEASE_SECONDS = LEASE_SECONDS
    # Messages carry the time limit the chaos workers run with (tests/support/worker.py).
    settings.STASH_TIME_LIMIT, settings.STASH_TIME_LIMIT_MARGIN = WORKER_TIME_LIMIT, WORKER_TIME_LIMIT_MARGIN
    name = request.node.originalname.removeprefix("test_").replace("_", " ")
    xfail = request.node.get_closest_marker("xfail")
    return Scenario(name, FIGURES, make_stash, expected_failure=xfail.kwargs.get("reason", "") if xfail else "")


@pytest.fixture(scope="session")
def log_dir():
    """The logs of the chaos suite's workers and Redis server, kept after the run for a post-mortem."""
    path = Path(settings.VAR_DIR) / "chaos-logs"
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("*.log"):
        old.unlink()
    return path


@pytest.fixture(scope="session")
def _chaos_worker(django_db_setup, django_db_blocker, log_dir):
    worker = ChaosWorker(f"stash-chaos-{uuid.uuid4().hex[:8]}", log_dir)
    yield worker
    worker.kill()


@pytest.fixture
def chaos_worker(_chaos_worker, chaos, settings):
    """A worker on the configured broker, started if a scenario before this one stopped it."""
    settings.STASH_QUEUE = _chaos_worker.queue
    return chaos.supervise(_chaos_worker.ensure_running())


class OwnBroker:
    """A Redis server of our own (which a scenario may stop or flush) and a worker on it."""

    def __init__(self, log_dir):
        self.redis = RedisServer(log_dir)
        self.worker = ChaosWorker(f"stash-chaos-redis-{uuid.uuid4().hex[:8]}", log_dir, broker_url=self.redis.url)


@pytest.fixture(scope="session")
def _own_broker(django_db_setup, django_db_blocker, log_dir):
    broker = OwnBroker(log_dir)
    yield broker
    broker.worker.kill()
    broker.redis.stop()


@pytest.fixture
def own_broker(_own_broker, chaos, settings):
    """Our own Redis as the broker of this process and of its worker, for the length of one test."""
    if _own_broker.redis.process is None or _own_broker.redis.process.poll() is not None:
        _own_broker.redis.start()
    chaos.supervise(_own_broker.worker.ensure_running())
    settings.STASH_QUEUE = _own_broker.worker.queue
    with publishing_to(_own_broker.redis.url):
        yield _own_broker


@pytest.fixture(scope="session")
def _own_cache(django_db_setup, django_db_blocker, log_dir):
    """A Redis server of our own as the cache (which a scenario may stop, fill or flush), and a worker
    whose cache it is too."""
    server = RedisServer(log_dir).start()
    worker = ChaosWorker(f"stash-chaos-cache-{uuid.uuid4().hex[:8]}", log_dir, cache_url=server.url)
    yield server, worker
    worker.kill()
    server.stop()


@pytest.fixture
def own_cache(_own_cache, chaos, settings):
    """Our own Redis as the cache of this process (as settings make it for ``CACHE_URL``) and of its
    worker, started and emptied for each test; the worker judges the test's queue."""
    server, worker = _own_cache
    if server.process.poll() is not None:
        server.start()
    server.client().flushall()
    settings.STASH_QUEUE = chaos.supervise(worker.ensure_running()).queue
    settings.CACHES = server.as_cache(settings)
    return server
