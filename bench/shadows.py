"""The shadow row: live save → verdict with and without a 100% shadow of the same five filters, in the same run.

Without and with a shadow in turn, ``BLOCKS`` times each (off, on, on, off, ...), so that the machine's
drift over the round falls on both alike. Each phase saves ``latency`` items one at a time, each waited
for before the next, as the latency row does; with, a shadow of the stash's own version samples every
live save (one shadow per phase: it starts before the phase and stops after it). The percentiles are of
all the phases' saves of each kind (``BLOCKS`` × ``latency`` items). The shadow's own time per item (its
runs' ``duration_ms``) says what it may cost: a live verdict must not be slower by more than that. The
items of the last phase are left for the runner's checks (one run each: the shadow writes none).
"""

import statistics
import time

from stash import processing
from stash.models import Shadow, ShadowRun
from stash.processing import shadow_runs

from . import scenarios
from .errors import BenchError
from .workload import payloads

#: Blocks without and with a shadow, in turn, each of ``latency`` items (with four, a round's p99 moved
#: by 3 ms between rounds; with eight, by 1.5 ms).
BLOCKS = 8
WARM_UP = 10  # items saved and judged, unmeasured, before each phase (before the shadow starts)
#: Seconds the shadow's task may take, after the last verdict, to record the last item.
SHADOW_WAIT = 30


def with_and_without(side, ctx):
    """``{"blocks", "off": percentiles, "on": percentiles, "shadowed", "disagreed", "shadow_mean_ms",
    "shadow_p95_ms"}``, in ms."""
    count = ctx.sizes.latency
    off, on, runs = [], [], []
    for block in range(BLOCKS):
        start = 2 * block * count
        first, second = ("off", "on") if block % 2 == 0 else ("on", "off")  # off, on, on, off, ...
        for phase, begin in ((first, start), (second, start + count)):
            if phase == "off":
                off += without(side, ctx, payloads(count, start=begin))
            else:
                times, shadow_runs_of_phase = with_shadow(side, ctx, payloads(count, start=begin))
                on += times
                runs += shadow_runs_of_phase
            if not (block == BLOCKS - 1 and phase == second):
                side.clear()
                ctx.settle()
    own = sorted(duration for _agreed, duration in runs)
    return {
        "blocks": BLOCKS,
        "off": scenarios.percentiles(off),
        "on": scenarios.percentiles(on),
        "shadowed": len(runs),
        "disagreed": sum(1 for agreed, _duration in runs if not agreed),
        "shadow_mean_ms": round(statistics.fmean(own), 3) if own else None,
        "shadow_p95_ms": round(statistics.quantiles(own, n=100, method="inclusive")[94], 3) if len(own) > 1 else None,
    }


def without(side, ctx, bodies):
    """Each save → verdict of ``bodies``, in seconds, with no shadow: paced as ``with_shadow`` is (the same
    pauses before and after), so that the shadow is all that differs."""
    warm_up(side, ctx)
    time.sleep(shadow_runs.LOOKUP_SECONDS + 0.1)
    try:
        return [scenarios.save_to_verdict(side, body) for body in bodies]
    finally:
        time.sleep(shadow_runs.LOOKUP_SECONDS + 0.1)


def with_shadow(side, ctx, bodies):
    """Each save → verdict of ``bodies``, in seconds, while a 100% shadow of the stash's own version
    judges them too; and the shadow's ``(agreed, duration_ms)`` for each."""
    warm_up(side, ctx)
    shadow = processing.start_shadow(side.stash, version=side.stash.config_version, percent=100, count=10 * len(bodies))
    time.sleep(shadow_runs.LOOKUP_SECONDS + 0.1)  # every worker process has seen it start
    try:
        times = [scenarios.save_to_verdict(side, body) for body in bodies]
        recorded(shadow, len(bodies))
        runs = list(ShadowRun.objects.filter(shadow=shadow).values_list("agreed", "duration_ms"))
    finally:
        Shadow.objects.filter(pk=shadow.pk, status=Shadow.Status.RUNNING).update(status=Shadow.Status.STOPPED)
        time.sleep(shadow_runs.LOOKUP_SECONDS + 0.1)  # every worker process has seen it stop
    Shadow.objects.filter(pk=shadow.pk).delete()
    return times, runs


def warm_up(side, ctx):
    """Unmeasured saves, judged and deleted: each pool process connects and builds its pipeline."""
    scenarios.single(side, payloads(WARM_UP, start=10_000))
    side.clear()
    ctx.settle()


def recorded(shadow, count):
    """``shadow`` once it has recorded ``count`` items; ``BenchError`` after ``SHADOW_WAIT`` seconds."""
    deadline = time.monotonic() + SHADOW_WAIT
    while time.monotonic() < deadline:
        shadow.refresh_from_db()
        if shadow.items >= count:
            return shadow
        time.sleep(scenarios.POLL_SECONDS)
    raise BenchError(f"the shadow recorded {shadow.items} of {count} items in {SHADOW_WAIT}s")
