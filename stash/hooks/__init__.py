"""Hooks: the base classes and ``register``, for built-in hooks and third-party packages.

from stash import hooks

@hooks.register("my_filter")
class MyFilter(hooks.Filter):
    # The first docstring line is what the admin shows.
    def filter(self, item):
        return self.keep()
"""

from stash.core.pipeline import Decision, Item
from stash.core.registry import register
from stash.hooks.base import EVENTS_SCHEMA, EventSink, Filter, Hook, Sink, Transform

__all__ = ["EVENTS_SCHEMA", "Decision", "EventSink", "Filter", "Hook", "Item", "Sink", "Transform", "register"]
