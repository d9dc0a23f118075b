"""Helpers to test a hook the way stash runs it, without a database, a worker or the admin.

    from stash.core.testing import run_hook

    def test_drops_shouting():
        result = run_hook("no_shouting", {"max_ratio": 0.5}, {"text": "HELLO THERE"})
        assert (result.verdict, result.code) == ("rejected", "shouting")

``run_hook`` checks the params against the hook's schema (``InvalidParams`` if they break it),
builds the hook and runs it as a one-step pipeline: the ``Result`` holds the verdict, reason,
code, payload and the trail entry that production records; a hook that raises shows up as an
``error`` entry, as it would in the admin. Call the hook's method directly (``build_hook``) to
see the exception itself.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Mapping

from stash.core import pipeline, registry


def build_hook(hook: str | type[Any], params: Mapping[str, Any] | None = None) -> Any:
    """An instance of ``hook`` (a registered name or a class) with checked ``params``.

    Raises ``NotRegistered`` for an unknown name and ``InvalidParams`` for params its schema
    refuses.
    """
    cls = registry.get(hook) if isinstance(hook, str) else hook
    params = {} if params is None else params
    cls.validate_params(params)
    return cls(params)


def make_item(payload: Mapping[str, Any] | None = None, **fields: Any) -> pipeline.Item:
    """An ``Item`` as hooks see it; ``fields`` set ``stash``, ``submitted_by``, ``created_at``..."""
    return pipeline.Item(payload=dict(payload or {}), **fields)


def run_hook(
    hook: str | type[Any],
    params: Mapping[str, Any] | None = None,
    payload: Mapping[str, Any] | None = None,
    *,
    timeout: float | None = None,
    **fields: Any,
) -> pipeline.Result:
    """Run a filter or transform over ``payload`` as a one-step pipeline; see the module docstring."""
    instance = build_hook(hook, params)
    step = pipeline.Step(hook=instance, name=getattr(instance, "name", "") or type(instance).__name__, timeout=timeout)
    if step.kind == "sink":
        raise TypeError("run_hook runs filters and transforms; call a sink with send_event().")
    return pipeline.Pipeline([step]).run(make_item(payload, **fields))


def send_event(
    hook: str | type[Any],
    params: Mapping[str, Any] | None,
    event: str,
    payload: Mapping[str, Any] | None = None,
    *,
    verdict: str = pipeline.ACCEPTED,
    reason: str = "",
    **fields: Any,
) -> bool:
    """Call lifecycle callback ``event`` (``"on_accept"``...) of a hook, as a stored verdict would.

    Returns False if the configured hook does not take that event (it was not called); an
    exception the callback raises propagates.
    """
    instance = build_hook(hook, params)
    if not pipeline.listens(instance, event):
        return False
    item = make_item(payload, **fields)
    if event == pipeline.ON_PIPELINE_START:
        getattr(instance, event)(item)
    else:
        getattr(instance, event)(item, pipeline.Result(verdict=verdict, payload=item.payload, reason=reason))
    return True


@contextlib.contextmanager
def register_temporarily(name: str, hook: type[Any]) -> Iterator[type[Any]]:
    """Register ``hook`` as ``name`` inside the ``with`` block only."""
    registry.register(name, hook)
    try:
        yield hook
    finally:
        registry.unregister(name)
