"""Shared fixtures: stashes with hooks, temporary hook registration, a stub broker, a real worker process."""

import contextlib

import pytest
from django.core.cache import cache

from stash import processing
from stash.core import testing
from stash.db import publishing
from stash.models import HookConfig, Stash
from stash.processing import shadow_runs

from .support.worker import (  # noqa: F401 - fixtures
    _session_sink_worker,
    _session_worker,
    sink_worker,
    worker,
    worker_queue,
)


@pytest.fixture
def make_stash(db):
    """Create a stash with hooks given as ``(hook name, params)`` or dicts of HookConfig fields."""

    def make(slug="audit", hooks=(), **fields):
        stash = Stash.objects.create(slug=slug, name=fields.pop("name", slug.title()), **fields)
        for spec in hooks:
            if not isinstance(spec, dict):
                spec = {"hook": spec[0], "params": spec[1]}
            HookConfig.objects.create(stash=stash, **spec)
        stash.refresh_from_db()
        return stash

    return make


class Broker:
    """Stands in for the Celery app at the publishing boundary: records every message.

    Unless ``held``, a worker starts each message as it comes (a message that wakes its stash
    clears the stash's marker), so every save publishes; ``held`` messages wait in the queue.
    """

    def __init__(self):
        self.messages = []
        self.error = None
        self.held = False

    def send_task(self, name, args=(), **options):
        if self.error is not None:
            raise self.error
        self.messages.append({"name": name, "args": args, **options})
        wake = options.get("kwargs", {}).get("wake")
        if not self.held and wake is not None:
            publishing.take_marker_down(wake)

    @property
    def chunks(self):
        return [message["args"][0] for message in self.messages]

    @property
    def ids(self):
        return [pk for chunk in self.chunks for pk in chunk]


@pytest.fixture
def broker(monkeypatch):
    broker = Broker()
    monkeypatch.setattr(publishing, "current_app", broker)
    return broker


@pytest.fixture
def register_temporarily():
    """Register hooks for one test only: ``register_temporarily("name", cls)`` (``stash.core.testing``'s,
    for the whole test)."""
    with contextlib.ExitStack() as registered:
        yield lambda name, cls: registered.enter_context(testing.register_temporarily(name, cls))


@pytest.fixture(autouse=True)
def _fresh_cache():
    """No test sees another's cache entries (a stash's waiting-message marker, a hook's counts)."""
    cache.clear()


@pytest.fixture(autouse=True)
def _fresh_pipeline_cache():
    """Rolled-back tests reuse stash ids and versions: never let one test see another's stash or pipeline."""
    processing.forget_cached()
    shadow_runs.forget()
    yield
    processing.forget_cached()
    shadow_runs.forget()
