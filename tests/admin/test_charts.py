"""The stash page's hourly bars: inline SVG with a bar per hour that ran and a title in words."""

import re

import pytest

from stash.admin import charts
from stash.processing.activity import Bucket, HookActivity, QueueLag, StashActivity

from ..processing.test_activity import NOW, START


def heights(svg):
    return [
        float(h) for h in re.findall(r'<rect class="bar" x="[\d.]+" y="[\d.]+" width="[\d.]+" height="([\d.]+)"/>', svg)
    ]


def test_a_bar_per_value_none_for_an_hour_without_runs_and_zero_a_sliver():
    svg = charts.bars([0.5, None, 0.0, 1.0], "No spam: drop rate", top=1.0)
    assert heights(svg) == [charts.HEIGHT / 2, 1.0, charts.HEIGHT]
    assert svg.startswith('<svg class="stash-spark" role="img"')
    assert "<title>No spam: drop rate</title>" in svg


def test_a_small_value_stays_visible_and_times_are_drawn_against_the_highest():
    assert heights(charts.bars([0.001], "t", top=1.0)) == [charts.MIN_BAR]
    assert heights(charts.bars([2.0, 4.0, None], "t")) == [charts.HEIGHT / 2, charts.HEIGHT]
    assert heights(charts.bars([None, None], "t")) == []


def test_the_title_is_escaped():
    assert "<title>&lt;b&gt; &amp; co</title>" in charts.bars([1.0], "<b> & co")


def test_the_words_say_what_the_bars_show():
    metric = charts.METRICS[0]
    assert charts.describe("No spam", metric, [None, 0.5, None, 0.25]) == (
        "No spam: drop rate per hour over the last 4 hours: highest 50%, latest hour 25%, 2 hours without runs."
    )
    assert charts.describe("No spam", metric, [0.5, None]) == (
        "No spam: drop rate per hour over the last 2 hours: highest 50%, latest hour no runs, 1 hour without runs."
    )
    assert charts.describe("Slow", charts.METRICS[3], [1234.5]) == (
        "Slow: p95 time per hour over the last hour: highest 1.2 s, latest hour 1.2 s."
    )
    assert charts.describe("Idle", metric, [None] * 24) == "Idle: drop rate per hour over the last 24 hours: no runs."


@pytest.mark.django_db
def test_a_row_per_hook_with_a_figure_and_a_chart_per_metric(make_stash):
    config = make_stash("audit", hooks=[("require_fields", {"fields": ["text"]})]).hooks.get()
    hours = tuple([Bucket()] * 23 + [Bucket(runs=4, dropped=1, held=2, errors=0, p95_ms=0.358)])
    day = Bucket(runs=10, dropped=1, held=2, errors=1, p95_ms=1234.5)
    rows = charts.activity_rows(StashActivity(START, NOW, [HookActivity(config, hours, day)], QueueLag(0, None)))
    assert [cell.figure for cell in rows[0].cells] == ["10%", "20%", "10%", "1.2 s"]
    assert [len(heights(cell.svg)) for cell in rows[0].cells] == [1, 1, 1, 1]
    assert (
        "require_fields: hold rate per hour over the last 24 hours: highest 50%, latest hour 50%"
        in rows[0].cells[1].svg
    )
