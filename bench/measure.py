"""One backend's measurements, run in a process of its own (``bench.run`` starts it with the backend's
environment, as settings are read at import): start the worker and gunicorn, run every row for both
sides in alternating rounds, check the verdicts, and write the figures as JSON.

Raises ``BenchError`` (the run fails) when a side leaves an item unjudged, the two sides disagree
on a verdict, or a stash item has other than one pipeline run.
"""

import dataclasses
import json
import os
import sqlite3
from dataclasses import dataclass
from typing import Callable

import redis
from celery import current_app
from django.conf import settings
from django.db import connection

from . import hooks, neighbours, profiling, scenarios, shadows, tracing
from .errors import BenchError
from .processes import WebServer, Worker
from .sides import HandSide, StashSide
from .workload import make_api_token, make_stash, payloads


@dataclass(frozen=True)
class Sizes:
    rounds: int
    bulk: int
    single: int
    orm: int
    orm_per_transaction: int
    latency: int
    api_seconds: int
    memory_small: int  # 0: the memory row is not run
    memory_large: int
    quick_posts: int
    embedded_single: int
    live_bulk: int  # the bulk import under which live saves are timed
    slow_seconds: int  # slow_neighbour: seconds of saves to the fast and the slow stash
    slow_delay: float  # slow_neighbour: seconds the slow stash's webhook receiver takes to answer
    profanity: int  # profanity: items judged each way (batched, one at a time)
    moderation: int  # moderation: items judged each way
    moderation_latency: float  # moderation: seconds the fake service takes to answer a request
    moderation_async: int  # moderation_async: single saves back to back (the service calls back after the latency)
    moderation_async_alone: int  # moderation_async: then saves one at a time, each judged before the next

    def for_backend(self, backend):
        return dataclasses.replace(self, single=self.embedded_single) if backend == "embedded" else self


FULL = Sizes(
    rounds=3,
    bulk=20_000,
    single=2_000,
    orm=5_000,
    orm_per_transaction=1_000,
    latency=200,
    api_seconds=10,
    memory_small=1_000,
    memory_large=100_000,
    quick_posts=20,
    embedded_single=300,
    live_bulk=20_000,
    slow_seconds=30,
    slow_delay=10,
    profanity=20_000,
    moderation=2_000,
    moderation_latency=0.05,
    moderation_async=2_000,
    moderation_async_alone=100,
)
# Small on the embedded default: once a backlog forms there, a worker waits a second (the filesystem
# broker's polling interval) for every two messages, and the baseline sends one per item.
QUICK = Sizes(
    rounds=1,
    bulk=400,
    single=100,
    orm=200,
    orm_per_transaction=100,
    latency=20,
    api_seconds=2,
    memory_small=0,
    memory_large=0,
    quick_posts=20,
    embedded_single=20,
    live_bulk=400,
    slow_seconds=4,
    slow_delay=2,
    profanity=200,
    moderation=50,
    moderation_latency=0.05,
    moderation_async=50,
    moderation_async_alone=10,
)


@dataclass
class Context:
    sizes: Sizes
    token: str
    web: object
    worker: object

    def settle(self):
        """Wait until the worker has nothing queued or running (a stash may leave no-op messages behind)."""
        self.worker.wait_idle(lambda: scenarios.queued(self.worker.queues))


@dataclass(frozen=True)
class Row:
    both: bool  # the baseline runs it too
    run: Callable
    expected: Callable = None  # how many items it saves, when known in advance
    same_payloads: bool = True  # False: compare verdicts only for the payload numbers both sides saw
    own_stashes: bool = False  # True: it judges stashes of its own and checks them itself (``bench.hooks``)


ROWS = {
    "bulk": Row(True, lambda side, ctx: scenarios.bulk(side, payloads(ctx.sizes.bulk)), lambda ctx: ctx.sizes.bulk),
    "single": Row(
        True, lambda side, ctx: scenarios.single(side, payloads(ctx.sizes.single)), lambda ctx: ctx.sizes.single
    ),
    "orm": Row(
        False,
        lambda side, ctx: scenarios.in_transactions(side, payloads(ctx.sizes.orm), ctx.sizes.orm_per_transaction),
        lambda ctx: ctx.sizes.orm,
    ),
    "latency": Row(
        True, lambda side, ctx: scenarios.latency(side, payloads(ctx.sizes.latency)), lambda ctx: ctx.sizes.latency
    ),
    "api": Row(
        True, lambda side, ctx: scenarios.api(side, ctx.web, ctx.token, ctx.sizes.api_seconds), same_payloads=False
    ),
    "quick_posts": Row(
        False,
        lambda side, ctx: scenarios.quick_posts(side, ctx.web, ctx.token, ctx.sizes.quick_posts),
        lambda ctx: ctx.sizes.quick_posts,
    ),
    "live_under_bulk": Row(
        True,
        lambda side, ctx: scenarios.live_under_bulk(side, side.live_side(), ctx.sizes.live_bulk),
        lambda ctx: ctx.sizes.live_bulk,
    ),
    "slow_neighbour": Row(
        False,
        lambda side, ctx: neighbours.slow_neighbour(side, ctx.worker, ctx.sizes.slow_seconds, ctx.sizes.slow_delay),
        lambda ctx: neighbours.saves(ctx.sizes.slow_seconds),
    ),
    # Stash only: a batched hook against the same hook one item at a time, on stashes of their own
    # (PostgreSQL + Redis only: 20,000 items one at a time take the worker about five minutes).
    "profanity": Row(False, lambda side, ctx: hooks.profanity(ctx, ctx.sizes.profanity), own_stashes=True),
    "moderation": Row(
        False,
        lambda side, ctx: hooks.moderation(ctx, ctx.sizes.moderation, ctx.sizes.moderation_latency),
        own_stashes=True,
    ),
    # Stash only: moderation_api in async mode, its service calling back through gunicorn.
    "moderation_async": Row(
        False,
        lambda side, ctx: hooks.moderation_async(
            ctx, ctx.sizes.moderation_async, ctx.sizes.moderation_latency, ctx.sizes.moderation_async_alone
        ),
        own_stashes=True,
    ),
    # Stash only: save → verdict without, then with, a 100% shadow of the same five filters.
    "shadow": Row(False, shadows.with_and_without, lambda ctx: ctx.sizes.latency),
    # Stash only, last: it restarts the worker twice (with tracing, then without).
    "tracing": Row(False, tracing.on_and_off, lambda ctx: ctx.sizes.latency),
}


BACKEND_ROWS = {
    "services": [
        "bulk",
        "single",
        "orm",
        "latency",
        "api",
        "live_under_bulk",
        "slow_neighbour",
        "profanity",
        "moderation",
        "moderation_async",
        "shadow",
        "tracing",
    ],
    "embedded": ["single", "latency", "quick_posts", "live_under_bulk", "slow_neighbour", "shadow", "tracing"],
    "rabbitmq": ["live_under_bulk", "slow_neighbour"],
}


def main(backend, quick, results_path, rounds=None, rows=None):
    """Measure ``backend`` (its environment set, Django set up) and write the results to ``results_path``."""
    sizes = (QUICK if quick else FULL).for_backend(backend)
    if rounds:
        sizes = dataclasses.replace(sizes, rounds=rounds)
    stash = make_stash()
    sides = [StashSide(stash), HandSide()]
    results = {
        "backend": backend,
        "sizes": dataclasses.asdict(sizes),
        "servers": servers(backend),
        "rows": {},
        "checks": [],
        "profile": profiling.where_time_goes(stash) if backend != "rabbitmq" else None,
    }
    for side in sides:
        side.clear()
    log_dir = settings.VAR_DIR / "logs"
    web = WebServer(dict(os.environ), log_dir)
    # Asynchronous hooks' callback URLs (the moderation_async row) lead to this gunicorn.
    web.env["STASH_PUBLIC_URL"] = web.url("")
    worker = Worker(dict(web.env), [settings.STASH_QUEUE, settings.BENCH_QUEUE], log_dir)
    try:
        ctx = Context(sizes, make_api_token(), web.start(), worker.start())
        warm_up(ctx, sides if "api" in BACKEND_ROWS[backend] else sides[:1])
        run_rounds(ctx, [name for name in BACKEND_ROWS[backend] if not rows or name in rows], sides, results)
        if backend == "services" and sizes.memory_large and (not rows or "memory" in rows):
            worker.stop()
            results["memory"] = scenarios.memory(sides[0], worker.start(), sizes.memory_small, sizes.memory_large)
            sides[0].clear()
    finally:
        web.stop()
        worker.stop()
        scenarios.purge_queues(
            [*worker.queues, *filter(None, [settings.STASH_SINK_QUEUE])], delete=backend == "rabbitmq"
        )
    with open(results_path, "w") as out:
        json.dump(results, out, indent=1)


def warm_up(ctx, sides):
    """A second of unmeasured load on each side's endpoint, so every gunicorn worker has loaded its
    URLs and opened its connections before a figure is taken."""
    for side in sides:
        scenarios.api(side, ctx.web, ctx.token, 1)
        side.clear()
    ctx.settle()


def run_rounds(ctx, row_names, sides, results):
    """Every row, both sides one after the other (stash first), ``rounds`` times over."""
    for round_no in range(ctx.sizes.rounds):
        for name in row_names:
            row = ROWS[name]
            seen = {}
            for side in sides if row.both else sides[:1]:
                figure, seen[side.name] = measure(name, row, side, ctx, round_no, results)
                results["rows"].setdefault(name, {}).setdefault(side.name, []).append(figure)
            if row.both:
                results["checks"].append(compare(name, round_no, row, seen))


def measure(name, row, side, ctx, round_no, results):
    """One figure of one side, checked; the side's items are deleted afterwards."""
    figure = row.run(side, ctx)
    if row.own_stashes:  # nothing of ``side`` to check: the row raised if its own stashes failed theirs
        print(f"bench: {name}, {side.label}, round {round_no + 1}: {figure}", flush=True)
        return figure, {}
    verdicts = side.verdicts()
    expected = row.expected(ctx) if row.expected else len(verdicts)
    check = {
        "row": name,
        "round": round_no,
        "side": side.name,
        "expected": expected,
        "saved": len(verdicts),
        "judged": sum(status in ("accepted", "rejected") for status in verdicts.values()),
        "accepted": sum(status == "accepted" for status in verdicts.values()),
        "runs_ok": side.runs_per_item_ok(),
    }
    results["checks"].append(check)
    if not (check["saved"] == check["judged"] == expected and check["runs_ok"]):
        raise BenchError(f"{name}, {side.label}, round {round_no + 1}: {check}")
    side.clear()
    ctx.settle()
    print(f"bench: {name}, {side.label}, round {round_no + 1}: {figure}", flush=True)
    return figure, verdicts


def compare(name, round_no, row, seen):
    """Both sides gave the same verdict for every payload (for ``api``: every payload both were sent)."""
    stash, hand = seen["stash"], seen["hand"]
    common = stash.keys() & hand.keys()
    differing = sorted(n for n in common if stash[n] != hand[n])
    same_set = not row.same_payloads or stash.keys() == hand.keys()
    check = {
        "row": name,
        "round": round_no,
        "compared": len(common),
        "differing": len(differing),
        "same_payloads": same_set,
    }
    if differing or not same_set or not common:
        raise BenchError(f"{name}, round {round_no + 1}: the sides disagree: {check}, payloads {differing[:10]}")
    return check


def servers(backend):
    """The database and broker servers, with versions."""
    if backend == "embedded":
        return {"database": f"SQLite {sqlite3.sqlite_version}", "broker": "kombu filesystem transport"}
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        pg_version = cursor.fetchone()[0]
    redis_version = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"]).info("server")["redis_version"]
    if backend == "rabbitmq":
        with current_app.connection_for_read() as conn:
            conn.ensure_connection(max_retries=1)
            rabbitmq_version = conn.connection.server_properties.get("version", "?")
        return {
            "database": f"PostgreSQL {pg_version}",
            "broker": f"RabbitMQ {rabbitmq_version}",
            "cache": f"Redis {redis_version}",
        }
    return {"database": f"PostgreSQL {pg_version}", "broker": f"Redis {redis_version}"}
