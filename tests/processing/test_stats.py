"""Per-hook statistics: durable counters, and p50/p95 times read from stored trails by config id."""

import pytest
from django.utils import timezone

from stash import processing
from stash.models import Content, HookConfig, PipelineRun
from stash.processing import stats

from ..admin.test_admin import judge


def test_percentile_is_nearest_rank():
    values = [5, 1, 4, 2, 3, 6, 7, 8, 9, 10]
    assert stats.percentile(values, 50) == 5
    assert stats.percentile(values, 95) == 10
    assert stats.percentile(values, 10) == 1
    assert stats.percentile([2.5], 95) == 2.5
    assert stats.percentile([], 50) is None


def run_with(content, *entries):
    """A stored run whose trail has ``(config, outcome, duration_ms)`` entries."""
    now = timezone.now()
    return PipelineRun.objects.create(
        content=content,
        revision=1,
        config_version=1,
        outcome="accepted",
        started_at=now,
        finished_at=now,
        trail=[
            {
                "config_id": config.pk,
                "hook": config.hook,
                "position": config.position,
                "outcome": outcome,
                "duration_ms": ms,
            }
            for config, outcome, ms in entries
        ],
    )


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=[("require_fields", {"fields": ["text"]}), ("max_size", {"max_bytes": 99})])


@pytest.mark.django_db
def test_times_are_read_from_trails_by_config_and_skipped_steps_do_not_count(audit):
    first, second = audit.hooks.in_order()
    item = Content.objects.create(stash=audit, payload={})
    for ms in range(1, 21):  # 1..20 ms for the first hook, ten times as long for the second
        run_with(item, (first, "kept", ms), (second, "dropped", ms * 10))
    run_with(item, (first, "skipped", 1000.0))
    by_id = stats.for_configs(audit.hooks.all())
    assert (by_id[first.pk].p50_ms, by_id[first.pk].p95_ms, by_id[first.pk].samples) == (10, 19, 20)
    assert (by_id[second.pk].p50_ms, by_id[second.pk].p95_ms) == (100, 190)


@pytest.mark.django_db
def test_stats_follow_the_config_when_it_is_moved(audit):
    first, second = audit.hooks.in_order()
    judge(audit, text="hi")
    judge(audit, text="x" * 200)
    processing.place_hooks(audit, {second.pk: 1})
    moved = stats.for_configs(HookConfig.objects.filter(stash=audit))
    assert HookConfig.objects.get(pk=second.pk).position == 1
    assert (moved[first.pk].runs, moved[first.pk].kept, moved[first.pk].samples) == (2, 2, 2)
    assert (moved[second.pk].runs, moved[second.pk].kept, moved[second.pk].dropped) == (2, 1, 1)
    assert moved[second.pk].mean_ms is not None and moved[second.pk].p95_ms is not None


@pytest.mark.django_db
def test_counters_live_in_the_database_not_the_process(audit):
    judge(audit, text="hi")
    processing.forget_cached()  # as after a restart: nothing is held in memory
    overturned = Content.objects.create(stash=audit, payload={"text": "y" * 200})
    processing.judge([overturned.pk])
    processing.overturn(Content.objects.filter(pk=overturned.pk), None)
    size = stats.for_configs(HookConfig.objects.filter(hook="max_size"))
    assert [(s.runs, s.kept, s.dropped, s.errors, s.overturned) for s in size.values()] == [(2, 1, 1, 0, 1)]


@pytest.mark.django_db
def test_times_come_from_the_latest_runs_only(audit):
    first = audit.hooks.in_order().first()
    item = Content.objects.create(stash=audit, payload={})
    run_with(item, (first, "kept", 500.0))
    for _ in range(3):
        run_with(item, (first, "kept", 1.0))
    assert stats.for_configs([first], window=3)[first.pk].p95_ms == 1.0
    assert stats.for_configs([first], window=4)[first.pk].p95_ms == 500.0


@pytest.mark.django_db
def test_stats_of_any_number_of_configs_take_two_queries(make_stash, django_assert_num_queries):
    for index in range(4):
        make_stash(f"s{index}", hooks=[("require_fields", {"fields": ["a"]})] * 3)
    configs = list(HookConfig.objects.all())
    with django_assert_num_queries(2):  # the times from the trails, the precision from the reviews
        stats.attach(configs)
    assert len({config.stats.runs for config in configs}) == 1 and len(configs) == 12
