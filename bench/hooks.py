"""The hook rows: a batched hook against the same hook judging one item at a time, through the real worker.

    profanity(ctx, items=20_000)          # {"batched": items/s, "single": items/s, "items", "rejected"}
    moderation(ctx, items=2_000, 0.05)    # the same, and "requests": what the service received each way
    moderation_async(ctx, 2_000, 0.05, 100)  # {"rate": items/s, "p50", "p95", "p99", "idle_p99" (ms), ...}

Each way is a stash of its own with one hook: the bundled hook, batched (the worker judges a bulk
import with ``Pipeline.run_many``, a slice at a time: one call of the hook per slice), or its
one-at-a-time twin (``bench/baseline/stash_hooks.py``: one ``Pipeline.run`` and one call of the hook
per item), with the same params and ``timeout_ms``. The items are saved in bulk (``submit_many``
×1,000) and timed from just before the first save to the last verdict, as the bulk row is; each way
first judges a few unmeasured items, so that every pool process has built its pipeline (and loaded
the model). Both ways must judge every item and give every payload the same verdict, one in ten
rejected, or the row fails.

``moderation_async`` is ``moderation_api`` in ``mode: async``, end to end as a user sees it: the
service answers each request ``202`` at once and, ``latency`` s later, POSTs each item's answer,
signed, to its ``callback_url`` (made of ``STASH_PUBLIC_URL``, the bench's gunicorn), so every
verdict goes through ``POST /api/callbacks/<token>/`` and a worker's resume. The items are single
saves, back to back, each in a transaction of its own; the figures are items/s from just before the
first save to the last verdict, and each item's save (its commit) → verdict (``processed_at``); then
the same save → verdict of items saved one at a time, each judged before the next (an idle system). Every
item must be judged once, one in ten rejected with the service's reason, and every callback taken
(``202``), or the row fails.
"""

import functools
import time

from stash.models import Content, HookConfig, Stash
from tests.support.fake_moderation import FakeModeration

from . import scenarios
from .errors import BenchError
from .sides import StashSide

WARM_UP = 200
#: One payload in ten is offensive (and holds a word the fake moderation service scores 0.9).
PERIOD = 10
SECRET = "bench-only-moderation-secret"
# Each hook's timeout_ms, both ways: a worker gives a message only as many items as fit in its time
# limit when every hook takes its whole timeout for each (docs/hooks.md, *A batched hook*). With the
# default 2,000 ms that is 12 items of a 30 s message, and a batch of 12 is all a hook is called with;
# with 400 ms, a bulk slice of 50. One item alone takes profanity about 8 ms, moderation_api the
# service's 50 ms and the round trip: 400 ms leaves room for a loaded machine.
TIMEOUT_MS = 400


def comment(n):
    """Payload number ``n``: a short comment; those with ``n % 10 == 3`` insult their reader."""
    text = f"comment {n}: thanks for the update, see you at the meeting"
    if n % PERIOD == 3:
        text += ", you fucking idiot"
    return {"text": text, "data": {"n": n}}


def comments(count, start=0):
    return [comment(n) for n in range(start, start + count)]


def hook_stash(slug, hook, params, timeout_ms):
    """A stash of one hook, ``hook`` with ``params`` (an earlier round's hook is replaced)."""
    stash, _ = Stash.objects.get_or_create(slug=slug, defaults={"name": slug})
    stash.hooks.all().delete()
    config = HookConfig(stash=stash, hook=hook, params=params, label=hook, timeout_ms=timeout_ms)
    config.full_clean()
    config.save()
    stash.refresh_from_db()
    return stash


def both_ways(ctx, name, hook, params, timeout_ms, count, between=None):
    """``count`` items judged by ``hook`` batched and by its one-at-a-time twin: items/s of each.
    ``between()`` is called after each way's warm-up and after its measured items."""
    figures = {"items": count}
    seen = {}
    for way, hook_name in (("batched", hook), ("single", f"{hook}_one_at_a_time")):
        side = StashSide(hook_stash(f"bench-{name}-{way}", hook_name, params, timeout_ms))
        try:
            side.save_many(comments(WARM_UP, start=count))
            scenarios.wait_judged(side, WARM_UP)
            side.clear()
            ctx.settle()
            if between:
                between(way, warm_up=True)
            figures[way] = scenarios.throughput(side, functools.partial(side.save_many, comments(count)), count)
            if between:
                between(way, warm_up=False)
            seen[way] = check(side, way, count)
        finally:
            side.clear()
            ctx.settle()
    if seen["batched"] != seen["single"]:
        differing = sorted(n for n in seen["batched"] if seen["batched"][n] != seen["single"].get(n))
        raise BenchError(f"{name}: batched and one at a time disagree on payloads {differing[:10]}")
    figures["rejected"] = sum(status == "rejected" for status in seen["batched"].values())
    return figures


def check(side, way, count):
    """The verdicts of ``side`` once every item is judged once, one in ten rejected; else ``BenchError``."""
    verdicts = side.verdicts()
    rejected = sum(status == "rejected" for status in verdicts.values())
    judged = sum(status in ("accepted", "rejected") for status in verdicts.values())
    if not (len(verdicts) == judged == count and rejected == len(range(3, count, PERIOD)) and side.runs_per_item_ok()):
        reasons = set(side.items().filter(status="rejected").values_list("reason", flat=True).distinct()[:5])
        raise BenchError(
            f"{side.stash.slug} ({way}): {len(verdicts)} saved, {judged} judged, {rejected} rejected; reasons {reasons}"
        )
    return verdicts


def profanity(ctx, count):
    """The bundled ``profanity`` classifier (alt-profanity-check), threshold 0.5."""
    return both_ways(ctx, "profanity", "profanity", {"threshold": 0.5}, TIMEOUT_MS, count)


def moderation(ctx, count, latency):
    """``moderation_api`` (sync) against a fake service in this process that answers each request
    after ``latency`` s; also the requests it received each way."""
    requests = {}
    with FakeModeration(secret=SECRET, latency=latency) as service:

        def between(way, warm_up):
            if not warm_up:
                requests[way] = len(service.requests)
            service.requests.clear()

        params = {"url": service.url, "secret": SECRET, "fields": ["text"], "mode": "sync", "timeout": 1}
        figures = both_ways(ctx, "moderation", "moderation_api", params, TIMEOUT_MS, count, between)
    return {**figures, "requests": requests, "latency": latency}


#: Async mode: the seconds the service has to call back (the hook's ``timeout``); far more than a
#: round takes, so that no item is timed out by the sweeper.
CALLBACK_WAIT = 300


def moderation_async(ctx, count, latency, alone):
    """``moderation_api`` in async mode against a fake service in this process that calls back
    ``latency`` s after each request, at the bench's gunicorn: ``count`` single saves back to back,
    then ``alone`` saves one at a time (each judged before the next: the "idle_" figures)."""
    with FakeModeration(secret=SECRET, mode="async", callback_delay=latency) as service:
        params = {"url": service.url, "secret": SECRET, "fields": ["text"], "mode": "async", "timeout": CALLBACK_WAIT}
        side = StashSide(hook_stash("bench-moderation-async", "moderation_api", params, TIMEOUT_MS))

        def reset():
            side.clear()
            ctx.settle()
            with service.lock, service.answered:
                service.requests.clear()
                service.answers.clear()

        try:
            for body in comments(WARM_UP // 4, start=count):
                side.save_one(body)
            scenarios.wait_judged(side, WARM_UP // 4)
            reset()
            started = time.time()
            saves = [scenarios.committed_save(side, body) for body in comments(count)]
            scenarios.wait_judged(side, count)
            verdicts = check(side, "async", count)
            check_answers(side, service, count)
            judged = dict(side.items().values_list("pk", "processed_at"))
            waits = [judged[pk].timestamp() - committed for pk, committed in saves]
            rate = count / (side.last_verdict() - started)
            requests = len(service.requests)
            reset()
            idle = [scenarios.save_to_verdict(side, body) for body in comments(alone)]
            check(side, "async, one at a time", alone)
            check_answers(side, service, alone)
        finally:
            side.clear()
            ctx.settle()
    return {
        "rate": rate,
        **scenarios.percentiles(waits),
        **{f"idle_{key}": value for key, value in scenarios.percentiles(idle).items()},
        "items": count,
        "alone": alone,
        "rejected": sum(status == "rejected" for status in verdicts.values()),
        "requests": requests,
        "latency": latency,
    }


def check_answers(side, service, count):
    """Every verdict came by a callback the endpoint took: one ``202`` per item, and the rejected
    items carry the service's reason; else ``BenchError``."""
    with service.answered:  # the fake records a callback once its answer is read: the last may lag its resume
        service.answered.wait_for(lambda: len(service.answers) >= count, 10)
        statuses = [answer.status for answer in service.answers]
    reasons = set(side.items().filter(status=Content.Status.REJECTED).values_list("reason", flat=True).distinct())
    if len(statuses) != count or set(statuses) != {202} or reasons != {"toxic (0.9)"}:
        raise BenchError(
            f"{side.stash.slug}: {len(statuses)} callbacks made for {count} items, answered "
            f"{sorted(set(statuses))}; rejected with {sorted(reasons)[:5]}"
        )
