"""Hook base classes: ``Filter``, ``Transform`` and ``Sink``, with JSON Schema params.

A hook class declares ``params_schema`` and a docstring whose first line describes it; an
instance is built once per pipeline from a HookConfig's params and then judges many items, so
it must keep no per-item state.
"""
from __future__ import annotations

from typing import Any, ClassVar, Mapping

import jsonschema

from .. import pipeline
from ..exceptions import InvalidParams


class Hook:
    """Base of every hook. Subclass ``Filter``, ``Transform`` or ``Sink``, not this."""

    kind: ClassVar[str] = ""
    name: ClassVar[str] = ""  # set by ``registry.register``
    params_schema: ClassVar[dict[str, Any]] = {"type": "object", "additionalProperties": False}

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        self.params = dict(params or {})

    @classmethod
    def description(cls) -> str:
        """The first line of the docstring."""
        doc = (cls.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else ""

    @classmethod
    def default_params(cls) -> dict[str, Any]:
        """Params filled with each property's ``default`` from the schema."""
        properties = cls.params_schema.get("properties", {})
        return {key: spec["default"] for key, spec in properties.items() if "default" in spec}

    @classmethod
    def validate_params(cls, params: Any) -> None:
        """Raise ``InvalidParams`` (with a message per field path) if ``params`` break the schema."""
        validator = jsonschema.Draft202012Validator(cls.params_schema)
        errors = sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path))
        if not errors:
            return
        by_field = {}
        for error in errors:
            path = ".".join(str(part) for part in error.absolute_path) or "params"
            by_field.setdefault(path, error.message)
        summary = "; ".join(f"{path}: {message}" for path, message in by_field.items())
        raise InvalidParams(f"Invalid params for hook {cls.name!r}: {summary}", by_field)


class Filter(Hook):
    """Keeps or drops content. Implement ``filter(item)`` returning keep(), drop() or hold()."""

    kind = "filter"

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        raise NotImplementedError(f"{type(self).__name__} must implement filter()")

    @staticmethod
    def keep() -> pipeline.Decision:
        return pipeline.keep()

    @staticmethod
    def drop(reason: str, code: str = "dropped") -> pipeline.Decision:
        return pipeline.drop(reason, code)

    @staticmethod
    def hold(reason: str, code: str = "held") -> pipeline.Decision:
        return pipeline.hold(reason, code)


class Transform(Hook):
    """Changes content. Implement ``transform(item)`` returning the new payload (or None)."""

    kind = "transform"

    def transform(self, item: pipeline.Item) -> Mapping[str, Any] | None:
        raise NotImplementedError(f"{type(self).__name__} must implement transform()")


class Sink(Hook):
    """Acts on verdicts: define any of ``on_accept``, ``on_reject``, ``on_hold`` (item, result).

    Set ``deliver_async = True`` for a sink that does network I/O: it is then called from its
    own Celery task with retries, after the verdict is stored, never inside the judging run.
    """

    kind = "sink"
    deliver_async: ClassVar[bool] = False
