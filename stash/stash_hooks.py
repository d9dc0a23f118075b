"""The built-in hooks, found by discovery like any app's ``stash_hooks`` module."""

from stash.hooks import filetypes, filters, history, payload_schema, sinks, transforms, webhook  # noqa: F401 - register
