"""Traces (OpenTelemetry): one trace per item, from the save to its verdict and sink deliveries.

Off unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (and ``OTEL_SDK_DISABLED`` is not ``true``):
then ``configure()``, called once per process where it starts serving (``hooksite.wsgi`` and
``hooksite.asgi``; each worker pool process, on Celery's ``worker_process_init``), instruments
Django, Celery, psycopg and requests and exports spans over OTLP/HTTP; the SDK reads the other
``OTEL_*`` variables itself (``OTEL_SERVICE_NAME``, default ``stash``; ``OTEL_TRACES_SAMPLER``,
``OTEL_BSP_*``, ``OTEL_EXPORTER_OTLP_HEADERS``, …). Off, nothing of OpenTelemetry is imported and
each call below returns at once.

An item is not judged by the message its save sent: saves of one stash share a message (a save
may join a waiting one and send nothing; see ``publishing``) and a batch judges many items. So a
save *remembers* its span context in the cache (``remember``: one ``set_many`` per transaction,
for ``CONTEXT_SECONDS``), and the worker (``judging``, ``run``) makes

- ``stash.judge`` per batch, a child of the message's task, *linked* to each item's save;
- ``stash.item`` per item, a child of its save's context (the web request), so the item's own trace
  goes on from the request to its verdict; under it ``stash.hook`` per hook run (name, kind,
  outcome) and the publishing of its sink deliveries (``continuing``), whose task's
  ``stash.deliver`` (``delivering``) ends the trace. Items judged together (``run_many``: a
  pipeline with a batched hook) each get theirs too, spanning the batch's run.

Whatever fails here (the cache, a bad context) is logged and never breaks a save or a batch.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any, Concatenate, ParamSpec, TypeVar

from django.core.cache import cache

logger = logging.getLogger(__name__)

ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_ENDPOINT"
DEFAULT_SERVICE_NAME = "stash"
#: Seconds a save's span context waits in the cache for its item's batch (a longer wait: the item's
#: spans start a trace of their own, under its batch's).
CONTEXT_SECONDS = 900
#: Item span contexts kept per process for publishing their sink deliveries (the oldest go first).
_KEPT_ITEMS = 4096

P = ParamSpec("P")
R = TypeVar("R")

_tracer: Any = None  # set by ``start``: tracing is on in this process
_provider: Any = None
_instrumentors: list[Any] = []
# Item id -> the context its save remembered, for the batch being judged.
_saves: ContextVar[Mapping[str, Any] | None] = ContextVar("stash_tracing_saves", default=None)
# Item id -> its ``stash.item`` span context, until its deliveries are published.
_items: dict[str, Any] = {}


def wanted(environ: Mapping[str, str] | None = None) -> bool:
    """True if the environment asks for traces (an OTLP endpoint, and the SDK not disabled)."""
    environ = os.environ if environ is None else environ
    return bool(environ.get(ENDPOINT_VARIABLE)) and environ.get("OTEL_SDK_DISABLED", "").lower() != "true"


def enabled() -> bool:
    """True if this process traces."""
    return _tracer is not None


def configure(environ: Mapping[str, str] | None = None) -> bool:
    """Start tracing in this process if the environment asks for it (see the module docstring);
    return whether it traces. Called again, does nothing more."""
    if _tracer is not None:
        return True
    if not wanted(environ):
        return False
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    start(BatchSpanProcessor(OTLPSpanExporter()))
    return True


def start(processor: Any, set_global: bool = True) -> Any:
    """Trace with span ``processor`` (an SDK ``SpanProcessor``); ``set_global``: as the process's
    tracer provider too (once per process; tests may leave it unset and ``stop`` after). Returns
    the tracer of stash's spans."""
    global _tracer, _provider
    from opentelemetry import trace
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.requests import RequestsInstrumentor
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider

    service = os.environ.get("OTEL_SERVICE_NAME") or DEFAULT_SERVICE_NAME
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: service}))
    provider.add_span_processor(processor)
    if set_global:
        trace.set_tracer_provider(provider)
    for instrumentor in (DjangoInstrumentor(), CeleryInstrumentor(), PsycopgInstrumentor(), RequestsInstrumentor()):
        instrumentor.instrument(tracer_provider=provider)
        _instrumentors.append(instrumentor)
    _provider, _tracer = provider, provider.get_tracer(__name__)
    return _tracer


def stop() -> None:
    """Stop tracing in this process: remove the instrumentation and flush what is left."""
    global _tracer, _provider
    for instrumentor in reversed(_instrumentors):
        instrumentor.uninstrument()
    _instrumentors.clear()
    _items.clear()
    if _provider is not None:
        _provider.shutdown()
    _provider = _tracer = None


# --- the web side: saves ---------------------------------------------------------------------------


def remember(*id_lists: Iterable[Any]) -> None:
    """Remember the current span context (a save's request) for the items of ``id_lists``,
    which a worker will judge: one cache write."""
    if _tracer is None:
        return
    from opentelemetry import propagate

    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    if not carrier:
        return
    try:
        cache.set_many({_key(pk): carrier for ids in id_lists for pk in ids}, timeout=CONTEXT_SECONDS)
    except Exception:
        logger.warning(
            "Could not remember the trace of a save; its item's spans start a trace of their own.", exc_info=True
        )


def _key(pk: Any) -> str:
    return f"stash:trace:{pk}"


# --- the worker side: batches, items, hooks, deliveries -----------------------------------------------


def judging(func: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], R]:
    """Decorate the function that judges a batch (its first argument: the items, ``Content``):
    traced, it runs in a ``stash.judge`` span linked to each item's save."""

    @functools.wraps(func)
    def judge(contents: Any, *args: P.args, **kwargs: P.kwargs) -> R:
        if _tracer is None:
            return func(contents, *args, **kwargs)
        return _judge(func, contents, *args, **kwargs)

    return judge


def _judge(func: Callable[..., R], contents: Any, *args: Any, **kwargs: Any) -> R:
    from opentelemetry import propagate, trace

    ids = [str(content.pk) for content in contents]
    try:
        found = cache.get_many([_key(pk) for pk in ids])
    except Exception:
        logger.warning("Could not read the traces of a batch's saves.", exc_info=True)
        found = {}
    saves = {pk: propagate.extract(found[_key(pk)]) for pk in ids if _key(pk) in found}
    links = []
    for pk, context in saves.items():
        span_context = trace.get_current_span(context).get_span_context()
        if span_context.is_valid:
            links.append(trace.Link(span_context, {"stash.item": pk}))
    with _tracer.start_as_current_span("stash.judge", links=links, attributes={"stash.items": len(ids)}):
        token = _saves.set(saves)
        try:
            return func(contents, *args, **kwargs)
        finally:
            _saves.reset(token)


def run(pipeline: Any, item: Any, on_step: Callable[[Any], None] | None = None) -> Any:
    """``pipeline.run(item, on_step=on_step)``; traced, in a ``stash.item`` span under the item's
    save, with a ``stash.hook`` span per hook that ran (from its start to its trail's duration)."""
    if _tracer is None:
        return pipeline.run(item, on_step=on_step)
    attributes = {"stash.item": item.id, "stash.stash": item.stash, "stash.revision": item.revision}
    with _tracer.start_as_current_span(
        "stash.item", context=(_saves.get() or {}).get(item.id), attributes=attributes
    ) as span:
        starts: list[int] = []

        def step_started(step: Any) -> None:
            starts.append(time.time_ns())
            if on_step is not None:
                on_step(step)

        result = pipeline.run(item, on_step=step_started)
        span.set_attribute("stash.verdict", result.verdict)
        for (started, step), entry in zip(zip(starts, pipeline.judging, strict=False), result.trail, strict=False):
            _hook_span(entry, step.kind, started)
        _keep(item.id, span.get_span_context())
    return result


def run_many(pipeline: Any, items: list[Any], on_step: Callable[[Any], None] | None = None) -> list[Any]:
    """``pipeline.run_many(items, on_step=on_step)``; traced, a ``stash.item`` span per item under its
    save, from the batch's start to its end, with a ``stash.hook`` span per hook that ran for it
    (from the hook's start, as long as its trail entry's duration: its share of a batched call)."""
    if _tracer is None:
        return list(pipeline.run_many(items, on_step=on_step))
    from opentelemetry import trace

    starts: dict[tuple[Any, ...], int] = {}

    def step_started(step: Any) -> None:
        starts[(step.config_id, step.position, step.name)] = time.time_ns()
        if on_step is not None:
            on_step(step)

    begun = time.time_ns()
    results = list(pipeline.run_many(items, on_step=step_started))
    ended = time.time_ns()
    kinds = {(step.config_id, step.position, step.name): step.kind for step in pipeline.judging}
    for item, result in zip(items, results, strict=True):
        attributes = {"stash.item": item.id, "stash.stash": item.stash, "stash.revision": item.revision}
        span = _tracer.start_span(
            "stash.item", context=(_saves.get() or {}).get(item.id), attributes=attributes, start_time=begun
        )
        span.set_attribute("stash.verdict", result.verdict)
        within = trace.set_span_in_context(span)
        for entry in result.trail:
            key = (entry.config_id, entry.position, entry.hook)
            _hook_span(entry, kinds.get(key, ""), starts.get(key, begun), within)
        span.end(end_time=ended)
        _keep(item.id, span.get_span_context())
    return results


def _hook_span(entry: Any, kind: str, started: int, context: Any = None) -> None:
    """A ``stash.hook`` span for the trail ``entry`` of a hook that started at ``started`` (ns)."""
    if _tracer is None:
        return
    from opentelemetry.trace import Status, StatusCode

    hook = _tracer.start_span(
        "stash.hook",
        context=context,
        start_time=started,
        attributes={
            "stash.hook": entry.hook,
            "stash.hook.label": entry.label,
            "stash.hook.kind": kind,
            "stash.hook_config": entry.config_id if entry.config_id is not None else -1,
            "stash.hook.position": entry.position,
            "stash.outcome": entry.outcome,
            "stash.reason_code": entry.code,
        },
    )
    if entry.outcome in ("error", "timeout"):
        hook.set_status(Status(StatusCode.ERROR, entry.message))
    hook.end(end_time=started + int(entry.duration_ms * 1_000_000))


def _keep(pk: str, span_context: Any) -> None:
    if len(_items) >= _KEPT_ITEMS:
        del _items[next(iter(_items))]
    _items[pk] = span_context


def continuing(content_id: Any) -> contextlib.AbstractContextManager[Any]:
    """A block inside which what is published (a sink delivery) belongs to the trace of item
    ``content_id``, as its ``stash.item`` span left it in this process."""
    if _tracer is None:
        return _NOTHING
    span_context = _items.get(str(content_id))
    return _NOTHING if span_context is None else _within(span_context)


_NOTHING = contextlib.nullcontext()


@contextlib.contextmanager
def _within(span_context: Any) -> Iterator[None]:
    from opentelemetry import context, trace

    token = context.attach(trace.set_span_in_context(trace.NonRecordingSpan(span_context)))
    try:
        yield
    finally:
        context.detach(token)


def delivering(func: Callable[P, R]) -> Callable[P, R]:
    """Decorate the function that delivers one sink callback, ``(config_id, content_id, event)``:
    traced, it runs in a ``stash.deliver`` span (under its task's, which the publisher's headers
    put in the item's trace); an exception marks it failed."""

    @functools.wraps(func)
    def deliver(*args: P.args, **kwargs: P.kwargs) -> R:
        if _tracer is None:
            return func(*args, **kwargs)
        config_id, content_id, event = args[:3]
        attributes = {"stash.hook_config": int(config_id), "stash.item": str(content_id), "stash.event": str(event)}
        with _tracer.start_as_current_span("stash.deliver", attributes=attributes) as span:
            try:
                value = func(*args, **kwargs)
            except Exception:
                span.set_attribute("stash.outcome", "failed")
                raise
            span.set_attribute("stash.outcome", "delivered")
            return value

    return deliver
