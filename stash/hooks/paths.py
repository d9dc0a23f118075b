"""Dotted paths into a payload (``data.probability``) and a walk over its text values."""
from __future__ import annotations

from typing import Any, Iterator, Mapping

MISSING = object()

# Keys whose values are encoded bytes, not text to scan.
BINARY_KEYS = frozenset({"b64_file"})


def lookup(payload: Mapping[str, Any], path: str) -> Any:
    """The value at dotted ``path`` in ``payload``, or ``MISSING``."""
    value: Any = payload
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isascii() and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def texts(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string in ``value`` with its dotted path, depth first, binary fields left out."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, child in value.items():
            if key not in BINARY_KEYS:
                yield from texts(child, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from texts(child, f"{path}.{index}" if path else str(index))
