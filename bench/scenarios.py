"""The measurements, each run for one side at a time through the real worker (and gunicorn, wrk).

Throughput is items over the time from just before the first save to the latest ``processed_at``
the worker wrote; latency is an item's ``processed_at`` minus the client's clock just after its
save committed. Each function raises ``BenchError`` if the worker does not judge every item in time.
"""

import contextlib
import json
import statistics
import threading
import time
import urllib.error
import urllib.request

from celery import current_app
from django.db import connections, transaction
from kombu.exceptions import ChannelError

from .errors import BenchError
from .processes import run_wrk
from .workload import SLUG, payload, payloads

POLL_SECONDS = 0.05
VERDICT_POLL_SECONDS = 0.01


def wait_judged(side, count, stall=120):
    """Wait until ``side`` has no undecided item left (``count`` were saved).

    Raises ``BenchError`` when ``stall`` seconds pass without one more item judged.
    """
    left, progress = side.undecided().count(), time.monotonic()
    while left:
        time.sleep(POLL_SECONDS)
        now_left = side.undecided().count()
        if now_left < left:
            left, progress = now_left, time.monotonic()
        elif time.monotonic() - progress > stall:
            raise BenchError(f"{side.label}: {left} of {count} items not judged, none for {stall}s")


def queued(queues):
    """Messages waiting in ``queues`` on the broker."""
    total = 0
    with current_app.connection_for_read() as conn:
        for queue in queues:
            with contextlib.suppress(ChannelError):  # Redis drops an empty queue's key: nothing waits there
                total += conn.default_channel.queue_declare(queue=queue, passive=True).message_count
    return total


def purge_queues(queues, delete=False):
    """Drop whatever is left in ``queues`` (a failed run's messages): the queues are this run's alone.
    With ``delete``, the queues go too (RabbitMQ keeps a queue after its worker stops)."""
    with current_app.connection_for_write() as conn:
        for queue in queues:
            with contextlib.suppress(ChannelError):
                if delete:
                    conn.default_channel.queue_delete(queue=queue)
                else:
                    conn.default_channel.queue_purge(queue=queue)


def throughput(side, save, count):
    """Items per second: from just before ``save()`` starts to the last verdict."""
    started = time.time()
    save()
    wait_judged(side, count)
    return count / (side.last_verdict() - started)


def bulk(side, payloads):
    """Bulk submits of 1,000."""
    return throughput(side, lambda: side.save_many(payloads), len(payloads))


def single(side, payloads):
    """One save per transaction (autocommit)."""
    return throughput(side, lambda: [side.save_one(body) for body in payloads], len(payloads))


def in_transactions(side, payloads, per_transaction):
    """Ordinary ORM saves, ``per_transaction`` of them in each ``transaction.atomic()``."""

    def save():
        for start in range(0, len(payloads), per_transaction):
            with transaction.atomic():
                for body in payloads[start : start + per_transaction]:
                    side.save_one(body)

    return throughput(side, save, len(payloads))


def latency(side, payloads):
    """p50/p95/p99 of save→verdict in ms, one item at a time, each waited for before the next."""
    return percentiles([save_to_verdict(side, body) for body in payloads])


def save_to_verdict(side, body):
    # The commit callback is registered before the save, so it runs first, before the save's own publish.
    pk, committed = committed_save(side, body)
    return verdict_time(side, pk) - committed


def live_under_bulk(side, live, count, interval=0.05):
    """A bulk import of ``count`` items (``side.save_many`` in a thread) and, until it is saved and
    judged, a live save every ``interval`` s (``live``: another stash of the side, or the side
    itself); p50/p95/p99 of the live saves' save → verdict in ms, and the bulk items still open
    (pending or being judged) at each live save. The live items are deleted after: the row's
    verdicts are the bulk import's."""
    imported = threading.Event()
    failed = []

    def import_all():
        try:
            side.save_many(payloads(count))
        except Exception as exc:  # reported below, in the runner's thread
            failed.append(exc)
        finally:
            connections.close_all()
            imported.set()

    importer = threading.Thread(target=import_all, name="bulk-import")
    importer.start()
    saves = []  # (id, committed, bulk items open then)

    def bulk_open():
        return side.undecided().exclude(pk__in=[pk for pk, *_ in saves])

    while not imported.is_set() or bulk_open().exists():
        pk, committed = committed_save(live, payload(count + len(saves)))
        saves.append((pk, committed, bulk_open().count()))
        time.sleep(interval)
    importer.join()
    if failed:
        raise BenchError(f"{side.label}: the bulk import failed: {failed[0]!r}")
    waits = [verdict_time(live, pk) - committed for pk, committed, _ in saves]
    if not live.runs_per_item_ok():
        raise BenchError(f"{live.label}: a live item has other than one pipeline run")
    if live is side:
        side.items().filter(pk__in=[pk for pk, *_ in saves]).delete()
    else:
        live.clear()
    still_open = [waiting for *_, waiting in saves]
    return {
        **percentiles(waits),
        "saves": len(saves),
        "open_median": statistics.median(still_open),
        "open_max": max(still_open),
    }


def committed_save(side, body):
    """Save ``body`` in a transaction of its own; its id and the client's clock just after it committed."""
    committed = []
    with transaction.atomic():
        transaction.on_commit(lambda: committed.append(time.time()))
        pk = side.save_one(body)
    return pk, committed[0]


def verdict_time(side, pk, timeout=30):
    """The ``processed_at`` of item ``pk`` once the worker has written it, as a Unix time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        processed = side.items().filter(pk=pk, processed_at__isnull=False).values_list("processed_at", flat=True)
        if processed:
            return processed[0].timestamp()
        time.sleep(VERDICT_POLL_SECONDS)
    raise BenchError(f"{side.label}: item {pk} not judged after {timeout}s")


def percentiles(seconds):
    cuts = statistics.quantiles([s * 1000 for s in seconds], n=100, method="inclusive")
    return {"p50": cuts[49], "p95": cuts[94], "p99": cuts[98]}


def api(side, web, token, seconds):
    """wrk's req/s and latency against the side's POST endpoint; every item is judged before returning."""
    figures = run_wrk(web.url(side.api_path), seconds, {"BENCH_TOKEN": token, "BENCH_STASH": side.api_stash})
    saved = settled_count(side)
    if saved < figures["requests"]:
        raise BenchError(f"{side.label}: wrk counted {figures['requests']} answered POSTs, {saved} items saved")
    wait_judged(side, saved)
    return {
        "rps": figures["requests"] / (figures["duration_us"] / 1e6),
        "p50": figures["p50_us"] / 1000,
        "p99": figures["p99_us"] / 1000,
        "requests": figures["requests"],
    }


def settled_count(side, quiet=1.0):
    """The number of items once it has stopped growing for ``quiet`` seconds (wrk leaves requests in flight)."""
    count, since = side.items().count(), time.monotonic()
    while time.monotonic() - since < quiet:
        time.sleep(POLL_SECONDS)
        latest = side.items().count()
        if latest != count:
            count, since = latest, time.monotonic()
    return count


def quick_posts(side, web, token, count):
    """Seconds from the answer to the last of ``count`` back-to-back POSTs until that item's verdict."""
    for n in range(count):
        pk = post(web.url(side.api_path), token, {"stash": SLUG, "payload": payload(n)})
        answered = time.time()
    return verdict_time(side, pk) - answered


def post(url, token, body):
    """POST ``body`` as JSON with the token; return the new item's id. Raises ``BenchError`` on a non-201."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Token {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            if response.status != 201:
                raise BenchError(f"POST {url} answered {response.status}")
            return json.load(response)["id"]
    except urllib.error.HTTPError as exc:
        raise BenchError(f"POST {url} answered {exc.code}: {exc.read()[:300]!r}") from exc


def memory(side, worker, small, large):
    """Worker RSS (KiB, main process and pool children) after ``small`` and after ``large`` items, in bulk."""
    rss = {}
    done = 0
    for target in (small, large):
        side.save_many([payload(n) for n in range(done, target)])
        wait_judged(side, target - done)
        done = target
        time.sleep(1)  # let the pool settle after its last batch
        rss[target] = worker.rss_kb()
    return {"small": small, "large": large, "small_kb": rss[small], "large_kb": rss[large]}
