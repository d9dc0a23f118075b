"""The built-in hooks, found by discovery like any app's ``stash_hooks`` module."""
from .hooks import filters  # noqa: F401 - registers on import
