"""A stash's last 24 hours, hour by hour, from its stored trails: counts, rates, p95, queue lag."""

from datetime import datetime, timedelta, timezone as tz

import pytest

from stash import processing
from stash.models import Content, PipelineRun
from stash.processing import activity, stats

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=tz.utc)
START = NOW - timedelta(hours=activity.HOURS)


def hour(n, minutes=30):
    """A time inside the n-th hour of the window (0: the oldest, 23: the latest)."""
    return START + timedelta(hours=n, minutes=minutes)


def run_at(content, finished_at, *entries):
    """A stored run finished at ``finished_at`` whose trail has ``(config, outcome, ms[, would])`` entries."""
    trail = [
        {
            "config_id": config.pk,
            "hook": config.hook,
            "label": config.label,
            "position": config.position,
            "outcome": outcome,
            "code": "",
            "message": "",
            "duration_ms": ms,
            "would": would[0] if would else "",
        }
        for config, outcome, ms, *would in entries
    ]
    return PipelineRun.objects.create(
        content=content,
        revision=1,
        config_version=1,
        outcome="accepted",
        started_at=finished_at,
        finished_at=finished_at,
        trail=trail,
    )


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=[("require_fields", {"fields": ["text"]}), ("max_size", {"max_bytes": 99})])


@pytest.fixture
def item(audit):
    return Content.objects.create(stash=audit, payload={"text": "x"})


def test_each_hour_counts_the_steps_that_ran_and_their_drops_holds_and_errors(audit, item):
    first, second = audit.hooks.in_order()
    for outcome in ["kept", "kept", "dropped", "held", "error", "timeout", "skipped", "transformed"]:
        run_at(item, hour(23), (first, outcome, 1.0))
    run_at(item, hour(23), (first, "observed", 1.0, "drop"))
    run_at(item, hour(23), (first, "observed", 1.0, "hold"))
    run_at(item, hour(23), (first, "observed", 1.0, "transform"))
    run_at(item, hour(0, minutes=1), (first, "dropped", 1.0), (second, "kept", 1.0))

    result = activity.for_stash(audit, now=NOW)
    assert [hook.config for hook in result.hooks] == [first, second]
    latest = result.hooks[0].hours[23]
    # The skipped step did not run; an observing hook's would-be drop and hold count as such.
    assert (latest.runs, latest.dropped, latest.held, latest.errors) == (10, 2, 2, 2)
    assert (latest.drop_rate, latest.hold_rate, latest.error_rate) == (0.2, 0.2, 0.2)
    oldest = result.hooks[0].hours[0]
    assert (oldest.runs, oldest.dropped, oldest.drop_rate) == (1, 1, 1.0)
    assert result.hooks[0].day.runs == 11 and result.hooks[0].day.dropped == 3
    assert [bucket.runs for bucket in result.hooks[1].hours] == [1] + [0] * 23
    quiet = result.hooks[0].hours[12]
    assert quiet.runs == 0 and quiet.drop_rate is None and quiet.p95_ms is None


def test_p95_is_the_nearest_rank_of_each_hour_and_of_the_whole_window(audit, item):
    first, _second = audit.hooks.in_order()
    early, late = list(range(1, 21)), list(range(100, 120))
    for ms in early:
        run_at(item, hour(3), (first, "kept", float(ms)))
    for ms in late:
        run_at(item, hour(20), (first, "kept", float(ms)))
    run_at(item, hour(20), (first, "skipped", 5000.0))  # did not run: not a time

    hook = activity.for_stash(audit, now=NOW).hooks[0]
    assert hook.hours[3].p95_ms == stats.percentile(early, 95) == 19
    assert hook.hours[20].p95_ms == stats.percentile(late, 95) == 118
    assert hook.day.p95_ms == stats.percentile(early + late, 95) == 117
    run_at(item, hour(7), (first, "kept", 2.5))
    assert activity.for_stash(audit, now=NOW).hooks[0].hours[7].p95_ms == 2.5


def test_only_this_stashs_runs_inside_the_window_count(audit, item, make_stash):
    first, _second = audit.hooks.in_order()
    run_at(item, START - timedelta(minutes=1), (first, "dropped", 1.0))  # before the window
    run_at(item, NOW + timedelta(minutes=1), (first, "dropped", 1.0))  # after it
    run_at(item, START + timedelta(seconds=1), (first, "kept", 1.0))  # its first moment: hour 0
    run_at(item, NOW - timedelta(seconds=1), (first, "kept", 1.0))  # its last: hour 23
    other = make_stash("other", hooks=[("require_fields", {"fields": ["text"]})])
    run_at(Content.objects.create(stash=other, payload={}), hour(5), (other.hooks.get(), "dropped", 1.0))

    hook = activity.for_stash(audit, now=NOW).hooks[0]
    assert [bucket.runs for bucket in hook.hours] == [1] + [0] * 22 + [1]
    assert hook.day.dropped == 0
    assert activity.for_stash(other, now=NOW).hooks[0].hours[5].dropped == 1


def test_the_queries_do_not_grow_with_the_number_of_hooks(audit, item, django_assert_num_queries):
    for n in range(6):
        audit.hooks.create(hook="max_size", params={"max_bytes": 10 + n})
    configs = list(audit.hooks.in_order())
    run_at(item, hour(23), *[(config, "kept", 1.0) for config in configs])
    with django_assert_num_queries(3):  # the hooks, their steps, the queue
        many = activity.for_stash(audit, now=NOW)
    audit.hooks.exclude(pk=configs[0].pk).delete()
    with django_assert_num_queries(3):
        one = activity.for_stash(audit, now=NOW)
    assert len(many.hooks) == 8 and len(one.hooks) == 1
    assert [hook.hours[23].runs for hook in many.hooks] == [1] * 8


def test_the_queue_lag_is_the_age_of_the_oldest_item_waiting_and_how_many_wait(audit):
    assert activity.queue_lag(audit, NOW) == activity.QueueLag(waiting=0, oldest_seconds=None)
    waiting = [Content.objects.create(stash=audit, payload={"n": n}) for n in range(3)]
    Content.objects.filter(pk=waiting[0].pk).update(updated_at=NOW - timedelta(minutes=5))
    Content.objects.filter(pk=waiting[1].pk).update(status="processing", updated_at=NOW - timedelta(minutes=9))
    Content.objects.filter(pk=waiting[2].pk).update(status="accepted", updated_at=NOW - timedelta(hours=3))
    lag = processing.hook_activity(audit, now=NOW).lag
    assert lag == activity.QueueLag(waiting=2, oldest_seconds=540.0)
