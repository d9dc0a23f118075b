"""The shadow row: live save → verdict with and without a 100% shadow of the same five filters, in the same run.

Off first, then on: a shadow of the stash's own version on every live save, for as many items as the phase
saves. Each phase saves ``latency`` items one at a time, each waited for before the next, as the latency row
does; the shadow's task runs after each verdict, beside the next save's judging. The shadow's own time per item
(its report) says what it may cost: a live verdict must not be slower by more than that. The items of the
second phase are left for the runner's checks (one run each: the shadow writes none).
"""

import time

from stash import processing
from stash.models import Shadow
from stash.processing import shadow_runs

from . import scenarios
from .errors import BenchError
from .workload import payloads

WARM_UP = 10  # items saved and judged, unmeasured, before each phase (before the shadow starts)
#: Seconds the shadow's task may take, after the last verdict, to record the last item.
SHADOW_WAIT = 30


def with_and_without(side, ctx):
    """``{"off": percentiles, "on": percentiles, "shadowed", "disagreed", "shadow_mean_ms", "shadow_p95_ms"}``, ms."""
    count = ctx.sizes.latency
    warm_up(side, ctx)
    off = scenarios.latency(side, payloads(count))
    side.clear()
    ctx.settle()
    warm_up(side, ctx)
    shadow = processing.start_shadow(side.stash, version=side.stash.config_version, percent=100, count=10 * count)
    time.sleep(shadow_runs.LOOKUP_SECONDS + 0.1)  # every worker process has seen it start
    try:
        on = scenarios.latency(side, payloads(count))
        shadow = recorded(shadow, count)
    finally:
        Shadow.objects.filter(pk=shadow.pk, status=Shadow.Status.RUNNING).update(status=Shadow.Status.STOPPED)
    report = processing.shadow_report(shadow)
    Shadow.objects.filter(pk=shadow.pk).delete()
    return {
        "off": off,
        "on": on,
        "shadowed": report["items"],
        "disagreed": report["disagreed"],
        "shadow_mean_ms": report["time"]["mean_ms"],
        "shadow_p95_ms": report["time"]["p95_ms"],
    }


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
