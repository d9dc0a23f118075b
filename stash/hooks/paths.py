"""Dotted paths into a payload (``data.probability``): look up, set, remove, and walk its text values."""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping

MISSING = object()

# Keys whose values are encoded bytes, not text to scan.
BINARY_KEYS = frozenset({"b64_file"})


def excerpt(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters for a reason message."""
    return text if len(text) <= limit else text[:limit] + "…"


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


def texts_at(payload: Mapping[str, Any], fields: list[str] | None) -> Iterator[tuple[str, str]]:
    """The strings under each of ``fields`` (dotted paths; all of the payload when None)."""
    if fields is None:
        yield from texts(payload)
        return
    for field in fields:
        value = lookup(payload, field)
        if value is not MISSING:
            yield from texts(value, field)


def map_texts(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` with ``change`` applied to every string in it, binary fields left out."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, Mapping):
        return {key: child if key in BINARY_KEYS else map_texts(child, change) for key, child in value.items()}
    if isinstance(value, list):
        return [map_texts(child, change) for child in value]
    return value


def map_texts_at(payload: dict[str, Any], fields: list[str] | None, change: Callable[[str], str]) -> dict[str, Any]:
    """``payload`` with ``change`` applied to the strings under ``fields`` (all when None), in place."""
    if fields is None:
        return map_texts(payload, change)
    for field in fields:
        value = lookup(payload, field)
        if value is not MISSING:
            assign(payload, field, map_texts(value, change))
    return payload


def assign(payload: dict[str, Any], path: str, value: Any) -> None:
    """Set dotted ``path`` in ``payload`` in place, making the objects on the way.

    Raises ``ValueError`` when a part of the path holds something that is not an object.
    """
    *parents, last = path.split(".")
    target: Any = payload
    walked = []
    for part in parents:
        walked.append(part)
        child = target.get(part, MISSING)
        if child is MISSING:
            child = target[part] = {}
        elif not isinstance(child, dict):
            raise ValueError(f"cannot set {path}: {'.'.join(walked)} is {type(child).__name__}, not an object")
        target = child
    target[last] = value


def remove(payload: dict[str, Any], path: str) -> bool:
    """Delete dotted ``path`` from ``payload`` in place; False if it was not there."""
    *parents, last = path.split(".")
    target = lookup(payload, ".".join(parents)) if parents else payload
    if isinstance(target, dict) and last in target:
        del target[last]
        return True
    return False
