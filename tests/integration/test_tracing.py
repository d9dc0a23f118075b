"""Traces from a save through the web face to its verdict on a real worker and its sink delivery.

This process is the web side: its spans go to the SDK's in-memory exporter. The worker traces as
``OTEL_EXPORTER_OTLP_ENDPOINT`` tells it to, to a small OTLP/HTTP receiver that this test runs;
both are read into one list of spans.
"""

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from stash.db import tracing
from stash.models import Content

from ..support.worker import WORKER_TIME_LIMIT, WORKER_TIME_LIMIT_MARGIN, SinkWorker, Worker, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@dataclass
class Span:
    """A finished span, from either side: ids in hex, as a trace viewer shows them."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str | None
    server: bool
    attributes: dict = field(default_factory=dict)
    links: list = field(default_factory=list)  # (trace id, span id, attributes)


class Receiver:
    """An OTLP/HTTP endpoint on 127.0.0.1: decodes the protobuf posts to /v1/traces and keeps the spans."""

    def __init__(self):
        self.spans = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest.FromString(body)
                receiver.spans.extend(_from_proto(request))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def _value(any_value):
    return getattr(any_value, any_value.WhichOneof("value"))


def _from_proto(request):
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield Span(
                    name=span.name,
                    trace_id=span.trace_id.hex(),
                    span_id=span.span_id.hex(),
                    parent_id=span.parent_span_id.hex() or None,
                    server=span.kind == span.SPAN_KIND_SERVER,
                    attributes={kv.key: _value(kv.value) for kv in span.attributes},
                    links=[
                        (link.trace_id.hex(), link.span_id.hex(), {kv.key: _value(kv.value) for kv in link.attributes})
                        for link in span.links
                    ],
                )


def _from_sdk(span):
    return Span(
        name=span.name,
        trace_id=f"{span.context.trace_id:032x}",
        span_id=f"{span.context.span_id:016x}",
        parent_id=f"{span.parent.span_id:016x}" if span.parent else None,
        server=span.kind == SpanKind.SERVER,
        attributes=dict(span.attributes),
        links=[],
    )


@pytest.fixture(scope="module")
def receiver():
    receiver = Receiver()
    yield receiver
    receiver.stop()


class Traced:
    """A worker process that exports its spans to ``endpoint``."""

    def __init__(self, queue, log_dir, endpoint):
        super().__init__(queue, log_dir)
        self.endpoint = endpoint

    def env(self):
        # Spans leave the worker every 50 ms rather than every 5 s.
        return {
            **super().env(),
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
            "OTEL_SERVICE_NAME": "stash-worker",
            "OTEL_BSP_SCHEDULE_DELAY": "50",
        }


class TracedWorker(Traced, Worker):
    pass


class TracedSinkWorker(Traced, SinkWorker):
    """The sinks worker (threads pool), as production runs it: a delivery's span comes from there."""


@pytest.fixture(scope="module")
def traced_worker(django_db_setup, django_db_blocker, worker_queue, receiver, tmp_path_factory):
    worker = TracedWorker(f"{worker_queue}-traced", tmp_path_factory.mktemp("traced-worker"), receiver.url).start()
    sinks = TracedSinkWorker(worker.queue, tmp_path_factory.mktemp("traced-sinks"), receiver.url).start()
    yield worker
    sinks.stop()
    worker.stop()


@pytest.fixture
def web(traced_worker, settings):
    """This process traces as a web process does, to memory, and saves to the traced worker's queue."""
    settings.STASH_QUEUE = traced_worker.queue
    settings.STASH_TIME_LIMIT, settings.STASH_TIME_LIMIT_MARGIN = WORKER_TIME_LIMIT, WORKER_TIME_LIMIT_MARGIN
    exporter = InMemorySpanExporter()
    tracing.start(SimpleSpanProcessor(exporter), set_global=False)
    yield exporter
    tracing.stop()


@pytest.fixture
def submit(client, admin_user):
    """Save an item through the API as a person would; its id."""
    client.force_login(admin_user)

    def submit(stash, payload):
        response = client.post(
            "/api/contents/", json.dumps({"stash": stash.slug, "payload": payload}), content_type="application/json"
        )
        assert response.status_code == 201, response.content
        return response.json()["id"]

    return submit


def spans(web, receiver):
    return [_from_sdk(span) for span in web.get_finished_spans()] + list(receiver.spans)


def request_of(all_spans, item_span):
    """The web request span whose context the item's save remembered."""
    return next(s for s in all_spans if s.server and s.span_id == item_span.parent_id)


def ancestors(all_spans, span):
    by_id = {s.span_id: s for s in all_spans}
    while span.parent_id in by_id:
        span = by_id[span.parent_id]
        yield span


def named(all_spans, name, **attributes):
    return [s for s in all_spans if s.name == name and all(s.attributes.get(k) == v for k, v in attributes.items())]


def wait_for_span(web, receiver, name, **attributes):
    return wait_for(
        lambda: named(spans(web, receiver), name, **attributes), timeout=30, message=f"a {name} span with {attributes}"
    )[0]


def test_one_trace_goes_from_the_web_request_to_the_hooks_and_the_sink_delivery(web, receiver, submit, make_stash):
    stash = make_stash("traced", hooks=[("require_fields", {"fields": ["text"]}), ("test_flaky_sink", {"failures": 0})])
    item = submit(stash, {"text": "hello"})
    wait_for(lambda: Content.objects.filter(pk=item, status="accepted").exists(), message="the verdict")
    deliver = wait_for_span(web, receiver, "stash.deliver", **{"stash.item": item})

    def delivered_under_the_item():
        # Each process exports its spans in its own batches: wait until the spans between the
        # delivery and the item (the judging worker's publish) have arrived too.
        all_spans = spans(web, receiver)
        found = named(all_spans, "stash.item", **{"stash.item": item})
        return all_spans if found and found[0] in ancestors(all_spans, deliver) else None

    all_spans = wait_for(delivered_under_the_item, timeout=30, message="the delivery's span under the item's")
    (item_span,) = named(all_spans, "stash.item", **{"stash.item": item})
    request = request_of(all_spans, item_span)
    assert request.attributes.get("http.method", request.attributes.get("http.request.method")) == "POST"
    assert item_span.trace_id == request.trace_id
    assert item_span.attributes["stash.verdict"] == "accepted"
    hooks = sorted(
        (s for s in all_spans if s.name == "stash.hook" and s.parent_id == item_span.span_id),
        key=lambda s: s.attributes["stash.hook.position"],
    )
    assert [
        (h.attributes["stash.hook"], h.attributes["stash.hook.kind"], h.attributes["stash.outcome"]) for h in hooks
    ] == [("require_fields", "filter", "kept")]
    assert {h.trace_id for h in hooks} == {request.trace_id}
    # The delivery's task was published under the item's span, in the same trace.
    assert deliver.trace_id == request.trace_id
    assert deliver.attributes["stash.outcome"] == "delivered"
    # The batch that judged it: in the trace of the message the save sent, and linked to the save.
    (judge,) = [
        s for s in all_spans if s.name == "stash.judge" and any(link[2].get("stash.item") == item for link in s.links)
    ]
    assert judge.trace_id == request.trace_id
    assert (request.trace_id, request.span_id, {"stash.item": item}) in judge.links
    assert request in ancestors(all_spans, judge)


def test_a_batch_of_saves_that_joined_one_message_is_judged_in_a_span_linked_to_each_save(
    web, receiver, submit, make_stash
):
    stash = make_stash("coalesced", hooks=[("test_sleep", {"seconds": 1.5}), ("test_flaky_sink", {"failures": 0})])
    first = submit(stash, {"sleep": True})
    wait_for(lambda: Content.objects.filter(pk=first, status="processing").exists(), message="the first claim")
    # Its message holds the stash's marker while it judges: these saves join it, each its own request.
    joined = [submit(stash, {"n": n}) for n in range(3)]
    for item in joined:
        wait_for_span(web, receiver, "stash.deliver", **{"stash.item": item})
    all_spans = spans(web, receiver)

    item_spans = {item: named(all_spans, "stash.item", **{"stash.item": item})[0] for item in joined}
    requests = {item: request_of(all_spans, span) for item, span in item_spans.items()}
    assert len({request.trace_id for request in requests.values()}) == 3  # three saves, three traces
    for item, span in item_spans.items():
        assert span.trace_id == requests[item].trace_id  # each item's trace goes on from its own save
    judges = [
        s
        for s in all_spans
        if s.name == "stash.judge" and {link[2].get("stash.item") for link in s.links} >= set(joined)
    ]
    assert len(judges) == 1, "the three saves are judged in one batch"
    (judge,) = judges
    assert {(r.trace_id, r.span_id) for r in requests.values()} <= {link[:2] for link in judge.links}
    # The batch is not the child of any of them: it belongs to the trace of the message that judged
    # it, the one the first save sent.
    first_span = wait_for_span(web, receiver, "stash.item", **{"stash.item": first})
    assert judge.trace_id == first_span.trace_id
    assert judge.trace_id not in {r.trace_id for r in requests.values()}
