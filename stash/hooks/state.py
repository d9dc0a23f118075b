"""Hook state: the scratch store a hook with side effects writes to in a run that only looks.

A hook that declares ``side_effects`` reads and writes its state through ``self.state``: the
real store (its ``open_state()``, e.g. Django's cache) when an item is judged for real, a
``Scratch`` over it when one is simulated, replayed or run as a golden example::

    scratch = Scratch(cache)
    scratch.add(key, 0)
    scratch.incr(key)      # the real cache is not written
    scratch.get(key)       # the real value, plus what this run did to it

Timeouts are taken and ignored: a scratch lives for one item's run.
"""

from __future__ import annotations

from typing import Any

_DELETED = object()


class Scratch:
    """Reads through to ``real``; keeps every write to itself. The methods of Django's cache
    that hooks use: ``get``, ``set``, ``add``, ``incr``, ``touch``, ``delete``."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self._written: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        value = self._written[key] if key in self._written else self.real.get(key)
        return default if value is None or value is _DELETED else value

    def set(self, key: str, value: Any, timeout: Any = None) -> None:
        self._written[key] = value

    def add(self, key: str, value: Any, timeout: Any = None) -> bool:
        if self.get(key) is not None:
            return False
        self._written[key] = value
        return True

    def incr(self, key: str, delta: int = 1) -> int:
        """As Django's: ``ValueError`` for a key that is not there."""
        value = self.get(key)
        if value is None:
            raise ValueError(f"Key {key!r} not found")
        self._written[key] = value + delta
        return value + delta

    def touch(self, key: str, timeout: Any = None) -> bool:
        return self.get(key) is not None

    def delete(self, key: str) -> bool:
        existed = self.get(key) is not None
        self._written[key] = _DELETED
        return existed
