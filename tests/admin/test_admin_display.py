"""What the admin shows: badges with words, readable times, the overturned mark, named inputs, the
stash's hourly charts and queue, and the icon."""

import re
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse
from django.utils import timezone

from stash import processing
from stash.models import Content, PipelineRun

from .test_admin import judge

pytestmark = pytest.mark.django_db


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit",
        name="Audit",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}},
        ],
    )


def page(client, name, *args, **params):
    response = client.get(reverse(name, args=args), params)
    assert response.status_code == 200
    return response.content.decode()


def column(html, name):
    """The cells of one changelist column, in row order."""
    return re.findall(rf'<td class="field-{name}">(.*?)</td>', html, re.S)


def test_the_items_list_shows_statuses_as_badges_and_marks_only_the_overturned(admin_client, audit, admin_user):
    judge(audit, text="hi")
    rejected = judge(audit, text="spam")
    judge(audit, text="spam too")
    processing.overturn(Content.objects.filter(pk=rejected.pk), admin_user)
    Content.objects.create(stash=audit, payload={"text": "new"})
    html = page(admin_client, "admin:stash_content_changelist")
    statuses = column(html, "status_badge")
    assert statuses == [
        '<span class="stash-badge stash-badge-pending">pending</span>',
        '<span class="stash-badge stash-badge-rejected">rejected</span>',
        '<span class="stash-badge stash-badge-accepted">accepted</span>',  # overturned
        '<span class="stash-badge stash-badge-accepted">accepted</span>',
    ]
    marks = column(html, "overturned_mark")
    assert marks[:2] + marks[3:] == [""] * 3  # blank
    assert marks[2] == (
        '<span class="stash-flag" title="A reviewer overturned the hooks&#x27; verdict.">'
        '<span aria-hidden="true">↺</span> overturned</span>'
    )
    assert "icon-no" not in html


def test_the_item_and_run_pages_show_badges_and_readable_times(admin_client, audit):
    item = judge(audit, text="spam")
    run = item.runs.get()
    PipelineRun.objects.filter(pk=run.pk).update(duration_ms=0.3580040000201734)
    html = page(admin_client, "admin:stash_content_change", item.pk)
    assert '<span class="stash-badge stash-badge-rejected">rejected</span>' in html  # the status
    assert '<span class="stash-badge stash-badge-dropped">dropped</span>' in html  # the trail's step
    assert "in 358 µs." in html

    runs = page(admin_client, "admin:stash_pipelinerun_changelist")
    assert column(runs, "duration") == ["358 µs"]
    assert column(runs, "outcome_badge") == ['<span class="stash-badge stash-badge-rejected">rejected</span>']
    assert "0.358004" not in runs
    html = page(admin_client, "admin:stash_pipelinerun_change", run.pk)
    assert '<div class="readonly">358 µs</div>' in html
    assert re.search(r'<td class="stash-num">\d+ µs</td>', html)  # each step's time


def test_hook_counters_give_times_with_their_units(admin_client, audit):
    judge(audit, text="hello")
    html = page(admin_client, "admin:stash_hookconfig_changelist").replace("\xa0", " ")  # figures do not break
    assert re.search(r"p50 \d+(\.\d)? (µs|ms) · p95 \d+(\.\d)? (µs|ms) · mean \d+(\.\d)? (µs|ms)", html)
    assert "p50 – · p95 – · mean –" not in html


def test_every_input_of_the_hooks_table_is_named_after_its_row_and_column(admin_client, audit):
    html = page(admin_client, "admin:stash_stash_change", audit.pk)
    for field in ("hook", "Label", "params", "Condition", "Enabled", "Mode", "On error", "Delete"):
        assert f'aria-label="Hook 1 (Needs text): {field}"' in html
        assert f'aria-label="Hook 2 (No spam): {field}"' in html
        # The row "Add another hook" copies (it is removed by a link, not a box).
        assert f'aria-label="New hook: {field}"' in html or field == "Delete"
    html = page(admin_client, "admin:stash_hookconfig_changelist")
    assert 'aria-label="No spam in Audit: Enabled"' in html


def test_the_stash_page_charts_each_hooks_last_day_and_the_queue(admin_client, audit):
    for text in ("hello", "spam", "spam again", "fine"):
        judge(audit, text=text)
    Content.objects.create(stash=audit, payload={"text": "waiting"})
    Content.objects.filter(status="pending").update(updated_at=timezone.now() - timezone.timedelta(seconds=185))
    html = page(admin_client, "admin:stash_stash_change", audit.pk)
    section = html[html.index('id="activity"') :]
    assert "The last 24 hours" in section
    assert re.search(r"Queue: 1 item waiting for a verdict, saved 3 min [5-9] s ago\.", section)
    rows = re.findall(r'<tr>\s*<th scope="row">(.*?)</th>\s*<td class="stash-num">(\d+)</td>(.*?)</tr>', section, re.S)
    assert [(title, runs) for title, runs, _cells in rows] == [("Needs text", "4"), ("No spam", "4")]
    figures = re.findall(r'<span class="stash-figure">(.*?)</span>', rows[1][2])
    assert figures[:3] == ["50%", "0%", "0%"]  # No spam dropped 2 of 4
    assert len(re.findall(r'<svg class="stash-spark" role="img"', section)) == 8
    assert (
        "<title>No spam: drop rate per hour over the last 24 hours: highest 50%, latest hour 50%, "
        "23 hours without runs.</title>"
    ) in section


def test_the_stash_page_says_when_no_item_waits(admin_client, audit):
    assert "Queue: no item is waiting for a verdict." in page(admin_client, "admin:stash_stash_change", audit.pk)


def test_admin_and_public_pages_link_the_icon(admin_client, client):
    icon = '<link rel="icon" href="/static/stash/favicon.svg" type="image/svg+xml">'
    assert icon in page(admin_client, "admin:index")
    assert icon in page(client, "admin:login")
    assert icon in page(client, "stash:index")
    assert "<svg" in Path(finders.find("stash/favicon.svg")).read_text()
