"""The tracing row: single saves and save → verdict with tracing on, then off, on the same worker.

On: the worker is restarted with ``OTEL_EXPORTER_OTLP_ENDPOINT`` pointing at a collector of this
process that accepts OTLP/HTTP posts and discards them, and the runner traces too (``stash.db.tracing``,
to the same collector), its saves made inside a span as a web request's are; so both sides of a save
do all that tracing costs them (remembering the save's context, the worker's spans and their export),
but for the request span of a web process. Off again after, for the rows that follow.
"""

import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.db import connections

from stash.db import tracing

from . import scenarios
from .workload import payloads

EXPORT_DELAY_MS = 200
WARM_UP = 10  # items saved and judged, unmeasured, before each phase


class DiscardingCollector:
    """An OTLP/HTTP endpoint on 127.0.0.1 that answers every post 200 and keeps only a count."""

    def __init__(self):
        self.posts = 0
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                collector.posts += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def on_and_off(side, ctx):
    """``{"on": figures, "off": figures, "posts": OTLP posts received}``; figures: single saves'
    items/s (``single``) and save → verdict ``p50`` / ``p95`` / ``p99`` in ms. Each phase starts
    on a freshly restarted worker, warmed up alike; on first, so that ``ctx.worker`` traces no more
    on return. The items of the last figure are left for the runner's checks."""
    collector = DiscardingCollector()
    try:
        with traced(ctx, collector.url):
            on = figures(side, ctx, keep=False)
    finally:
        collector.stop()
    return {"on": on, "off": figures(side, ctx, keep=True), "posts": collector.posts}


def figures(side, ctx, keep):
    scenarios.single(side, payloads(WARM_UP))  # each pool process connects and builds its pipeline
    settle(side, ctx)
    single = scenarios.single(side, payloads(ctx.sizes.single))
    settle(side, ctx)
    latency = scenarios.latency(side, payloads(ctx.sizes.latency))
    if not keep:
        settle(side, ctx)
    return {"single": single, **latency}


def settle(side, ctx):
    side.clear()
    ctx.settle()


@contextmanager
def traced(ctx, url):
    """Inside: the worker (restarted) and this process trace to ``url``; the worker is restarted
    without on the way out."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    plain = dict(ctx.worker.env)
    # Spans leave every EXPORT_DELAY_MS, so that a phase of a few seconds exports (and pays for) its own.
    restart(
        ctx,
        {
            **plain,
            tracing.ENDPOINT_VARIABLE: url,
            "OTEL_SERVICE_NAME": "stash-bench-worker",
            "OTEL_BSP_SCHEDULE_DELAY": str(EXPORT_DELAY_MS),
        },
    )
    tracer = tracing.start(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces"), schedule_delay_millis=EXPORT_DELAY_MS),
        set_global=False,
    )
    connections.close_all()  # the next query connects through the instrumented driver
    try:
        with tracer.start_as_current_span("bench.saves"):
            yield
    finally:
        tracing.stop()
        connections.close_all()
        ctx.settle()
        restart(ctx, plain)


def restart(ctx, env):
    ctx.settle()
    ctx.worker.stop()
    ctx.worker.env = env
    ctx.worker.start()
