"""Shared fixtures: stashes with hooks, temporary hook registration, a real worker process."""
import pytest
from django.core.cache import cache

from stash import processing, registry
from stash.models import HookConfig, Stash

from .worker import _session_worker, worker, worker_queue  # noqa: F401 - fixtures


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


@pytest.fixture
def register_temporarily():
    """Register hooks for one test only: ``register_temporarily("name", cls)``."""
    added = []

    def register(name, cls):
        registry.register(name, cls)
        added.append(name)
        return cls

    yield register
    for name in added:
        registry.unregister(name)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """No test sees another's cache entries (a stash's waiting-message marker, a hook's counts)."""
    cache.clear()


@pytest.fixture(autouse=True)
def _fresh_pipeline_cache():
    """Rolled-back tests reuse stash ids and versions: never let one test see another's stash or pipeline."""
    processing.forget_cached()
    yield
    processing.forget_cached()
