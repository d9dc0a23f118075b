"""Hook base classes: ``Filter``, ``Transform`` and ``Sink``, with JSON Schema params.

A hook class declares ``params_schema`` and a docstring whose first line describes it; an
instance is built once per pipeline from a HookConfig's params and then judges many items, so
it must keep no per-item state. A hook whose judging changes anything besides the verdict
declares ``side_effects`` and keeps that state in ``self.state`` (see ``Hook.side_effects``).
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Mapping

import jsonschema  # type: ignore[import-untyped]

from stash.core import pipeline
from stash.core.exceptions import InvalidParams
from stash.hooks.params_errors import worded
from stash.hooks.state import Scratch


class Hook:
    """Base of every hook. Subclass ``Filter``, ``Transform`` or ``Sink``, not this."""

    kind: ClassVar[str] = ""
    name: ClassVar[str] = ""  # set by ``registry.register``
    params_schema: ClassVar[dict[str, Any]] = {"type": "object", "additionalProperties": False}
    #: True when judging an item changes something besides its verdict (a counter, a cache
    #: entry). Such a hook reads and writes that state through ``self.state`` only, and names
    #: the real store in ``open_state()``: runs that only look (simulate, replay, golden
    #: examples) give it a scratch copy, so they show what it would do and change nothing.
    side_effects: ClassVar[bool] = False
    #: True when the hook's answer comes later, from an outside service (it returns
    #: ``pipeline.pending()``): runs that only look never call it (``Pipeline.looking``).
    asynchronous: bool = False
    #: The id of the hook config it was built for (set when a pipeline is built; None otherwise):
    #: an asynchronous hook reads its item's callback URL by it (``Item.callbacks``).
    config_id: int | None = None
    _scratch: Scratch | None = None

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        self.params = dict(params or {})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Refused at import: a hook that writes to a store it does not name could not be given a scratch one.
        if cls.side_effects and cls.kind != "sink" and cls.open_state is Hook.open_state:
            raise TypeError(
                f"{cls.__qualname__} declares side_effects: define open_state() to return the store it writes to."
            )

    def open_state(self) -> Any:
        """The store a hook with ``side_effects`` writes to when judging for real: an object with
        the methods of Django's cache that ``state.Scratch`` has (get, set, add, incr, touch, delete)."""
        raise NotImplementedError(f"{type(self).__name__} declares no state")

    @property
    def state(self) -> Any:
        """What a hook with ``side_effects`` reads and writes: ``open_state()`` when judging for
        real, a ``Scratch`` over it in a run that only looks (``scratch()``)."""
        return self._scratch if self._scratch is not None else self.open_state()

    def scratch(self) -> Hook:
        """A copy of this hook for a run that only looks: its ``state`` reads through to the real
        store and keeps its writes to itself. The hook itself is left as it is."""
        twin = copy.copy(self)
        twin._scratch = Scratch(self.open_state())
        return twin

    @classmethod
    def cache_fields(cls, params: Mapping[str, Any]) -> list[str] | None:
        """The payload fields (dotted paths: ``"text"``, ``"meta.title"``) this hook reads with
        ``params``. When its config has ``cache_seconds``, its outcome is reused for items whose
        fields are the same; None (the default): for items whose whole payload is the same."""
        return None

    def feedback(self, item: pipeline.Item, verdict: str) -> None:
        """A person's word on an item this hook decided: a reviewer approved, rejected or
        overturned it, or an appeal reversed it; ``verdict`` is its new status ("accepted" or
        "rejected"). Called in a task on the sinks' queue once the decision is committed; raise
        to be retried. Does nothing unless a hook defines it (a learning filter, a service that
        takes reports)."""

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
    def secret_params(cls) -> frozenset[str]:
        """Params marked ``writeOnly`` in the schema (secrets): stored, never shown back."""
        properties = cls.params_schema.get("properties", {})
        return frozenset(key for key, spec in properties.items() if spec.get("writeOnly"))

    @classmethod
    def validate_params(cls, params: Any) -> None:
        """Raise ``InvalidParams`` (with a message per field path) if ``params`` are not valid.

        First the JSON Schema; when that passes, the hook's own ``check_params``.
        """
        validator = jsonschema.Draft202012Validator(cls.params_schema)
        errors = sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path))
        by_field: dict[str, str] = {}
        secrets = cls.secret_params()
        for error in errors:
            path, message = worded(error, secrets)  # on the field it is about; never quoting a secret
            by_field.setdefault(path, message)
        if not by_field:
            by_field = dict(cls.check_params(params))
        if by_field:
            summary = "; ".join(f"{path}: {message}" for path, message in by_field.items())
            raise InvalidParams(f"Invalid params for hook {cls.name!r}: {summary}", by_field)

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> Mapping[str, str]:
        """Checks a schema cannot express (a pattern compiles, min <= max): a message per field.

        Called with params the schema accepted; return ``{}`` when they are fine.
        """
        return {}


class Filter(Hook):
    """Keeps or drops content. Implement ``filter(item)`` returning keep(), drop() or hold(), or
    ``filter_many(items)`` returning one of them per item (a batched hook)."""

    kind = "filter"

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        raise NotImplementedError(f"{type(self).__name__} must implement filter()")

    @pipeline.per_item
    def filter_many(self, items: list[pipeline.Item]) -> list[pipeline.Decision]:
        """One decision per item, in order. Override it to judge a batch in one call (a model,
        a service that takes lists): the runner then calls it once per batch with the items
        still alive at this hook (see ``pipeline.batched``). By default: ``filter`` per item."""
        return [self.filter(item) for item in items]

    @staticmethod
    def keep() -> pipeline.Decision:
        return pipeline.keep()

    @staticmethod
    def drop(reason: str, code: str = "dropped", field: str = "") -> pipeline.Decision:
        return pipeline.drop(reason, code, field)

    @staticmethod
    def hold(reason: str, code: str = "held", field: str = "") -> pipeline.Decision:
        return pipeline.hold(reason, code, field)


class Transform(Hook):
    """Changes content. Implement ``transform(item)`` returning the new payload (or None), or
    ``transform_many(items)`` returning one per item (a batched hook)."""

    kind = "transform"

    def transform(self, item: pipeline.Item) -> Mapping[str, Any] | None:
        raise NotImplementedError(f"{type(self).__name__} must implement transform()")

    @pipeline.per_item
    def transform_many(self, items: list[pipeline.Item]) -> list[Mapping[str, Any] | None]:
        """One new payload (or None) per item, in order; each item's payload is its own to change.
        Override it to change a batch in one call. By default: ``transform`` per item."""
        return [self.transform(item) for item in items]


class Sink(Hook):
    """Acts on verdicts: define any of ``on_accept``, ``on_reject``, ``on_hold``, ``on_error``.

    Each is called with ``(item, result)`` once the verdict is stored; ``on_pipeline_start(item)``
    and ``on_pipeline_end(item, result)`` may be defined too (on any hook), and ``on_reversed(item,
    result)``: a rejection reversed on appeal (the item is accepted now; nothing else is sent again). Set
    ``deliver_async = True`` for a sink that does network I/O: its verdict callbacks are then
    called from their own Celery task with retries, never inside the judging run; raise to be
    retried, return to be done.
    """

    kind = "sink"
    #: A sink's callbacks are its side effects: runs that only look never call them.
    side_effects = True
    deliver_async: ClassVar[bool] = False
    #: The verdict events acted on when params give no ``events`` (None: every one it defines).
    default_events: ClassVar[tuple[str, ...] | None] = None

    def listens_to(self, event: str) -> bool:
        """Whether this configured sink wants ``event``: params ``events`` narrow the verdict ones."""
        events = self.params.get("events", self.default_events)
        if events is None or event not in _VERDICT_EVENTS:
            return True
        return event.removeprefix("on_") in events


class EventSink(Sink):
    """A sink with one method for all verdict events: ``handle(event, item, result)``.

    ``event`` is "accept", "reject", "hold" or "error"; declare ``"events": EVENTS_SCHEMA`` in
    ``params_schema`` to let the admin choose which.
    """

    def handle(self, event: str, item: pipeline.Item, result: pipeline.Result) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement handle()")

    def on_accept(self, item: pipeline.Item, result: pipeline.Result) -> None:
        self.handle("accept", item, result)

    def on_reject(self, item: pipeline.Item, result: pipeline.Result) -> None:
        self.handle("reject", item, result)

    def on_hold(self, item: pipeline.Item, result: pipeline.Result) -> None:
        self.handle("hold", item, result)

    def on_error(self, item: pipeline.Item, result: pipeline.Result) -> None:
        self.handle("error", item, result)


_VERDICT_EVENTS = (pipeline.ON_ACCEPT, pipeline.ON_REJECT, pipeline.ON_HOLD, pipeline.ON_ERROR)

#: The ``events`` param a sink may declare in its schema: which verdict callbacks it acts on.
EVENTS_SCHEMA = {
    "type": "array",
    "items": {"enum": ["accept", "reject", "hold", "error"]},
    "minItems": 1,
    "uniqueItems": True,
    "description": "Which verdicts it acts on: accept, reject, hold, error (a hook failed).",
}
