"""The built-in hooks, found by discovery like any app's ``stash_hooks`` module."""

from stash.hooks import (  # noqa: F401 - register
    classifiers,
    filetypes,
    filters,
    history,
    payload_schema,
    services,
    sinks,
    transforms,
    webhook,
)
