"""stash_prune and the daily prune task: old runs and final items go, in short batches; latest trails stay."""

import io
import re
import threading
from datetime import timedelta

import pytest
from celery.schedules import crontab
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from hooksite.celery import app
from stash import processing, tasks
from stash.models import Content, PipelineRun, Stash

pytestmark = pytest.mark.django_db

Status = Content.Status
DAY = timedelta(days=1)


def run(*args):
    out = io.StringIO()
    call_command("stash_prune", *args, stdout=out, no_color=True)
    return out.getvalue()


def make_items(stash, count, status=Status.ACCEPTED, days_ago=40, **fields):
    """``count`` items of ``stash`` judged ``days_ago`` days ago (accepted ones numbered in its queue)."""
    when = timezone.now() - days_ago * DAY
    head = stash.queue_head
    objs = []
    for n in range(count):
        queue_seq = None
        if status == Status.ACCEPTED:
            head += 1
            queue_seq = head
        objs.append(
            Content(
                stash=stash,
                payload={"text": f"{status} {n}"},
                status=status,
                queue_seq=queue_seq,
                processed_at=None if status in (Status.PENDING, Status.PROCESSING) else when,
                **fields,
            )
        )
    Content.objects.bulk_create(objs)
    Stash.objects.filter(pk=stash.pk).update(queue_head=head)
    stash.queue_head = head
    return objs


def add_runs(content, *days_ago):
    """A run of ``content`` finished each of ``days_ago`` days ago, in that order (ids increase)."""
    now = timezone.now()
    return PipelineRun.objects.bulk_create(
        PipelineRun(
            content=content,
            revision=1,
            config_version=1,
            outcome=content.status,
            started_at=now - days * DAY,
            finished_at=now - days * DAY,
            trail=[],
        )
        for days in days_ago
    )


def latest_runs():
    """{item id: id of the run its page and the API show}."""
    return {content.pk: content.runs.first().pk for content in Content.objects.all() if content.runs.exists()}


# --- runs ------------------------------------------------------------------------------------


def test_runs_past_retention_go_recent_ones_and_each_items_latest_stay(make_stash):
    stash = make_stash("audit")
    a, b, c, d = make_items(stash, 4)
    a_old, a_older, a_latest = add_runs(a, 50, 40, 35)  # all old: the latest stays all the same
    b_old, b_recent = add_runs(b, 40, 5)
    [c_only] = add_runs(c, 60)
    d_recent, d_latest = add_runs(d, 10, 1)
    shown = latest_runs()

    report = processing.prune(run_days=30)

    assert (report.runs, report.items, report.item_runs) == (3, 0, 0)
    assert set(PipelineRun.objects.values_list("pk", flat=True)) == {
        a_latest.pk,
        b_recent.pk,
        c_only.pk,
        d_recent.pk,
        d_latest.pk,
    }
    assert latest_runs() == shown
    assert Content.objects.count() == 4


def test_of_two_latest_runs_finished_at_the_same_moment_the_one_the_page_shows_stays(make_stash):
    [item] = make_items(make_stash("audit"), 1)
    first, second = add_runs(item, 40, 40)
    PipelineRun.objects.filter(pk=second.pk).update(finished_at=first.finished_at)
    assert item.runs.first().pk == second.pk

    assert processing.prune(run_days=30).runs == 1
    assert list(item.runs.values_list("pk", flat=True)) == [second.pk]


def test_the_retention_comes_from_the_setting_and_days_overrides_it(make_stash, settings):
    [item] = make_items(make_stash("audit"), 1)
    add_runs(item, 20, 12, 1)
    settings.STASH_RUN_RETENTION_DAYS = 15

    assert run().startswith("Deleted 1 pipeline run(s) finished before ")
    assert item.runs.count() == 2
    out = run("--days", "10")
    assert out.startswith("Deleted 1 pipeline run(s) finished before ") and "(each item's latest run kept)" in out
    assert item.runs.count() == 1


def test_an_items_trail_on_its_page_and_in_the_api_survives_the_prune(make_stash, admin_client):
    audit = make_stash(
        "audit", hooks=[{"hook": "keyword_blocklist", "params": {"words": ["spam"]}, "label": "No spam"}]
    )
    item = processing.submit(audit, {"text": "spam"})[0]
    processing.judge([item.pk])
    processing.edit_payload(Content.objects.get(pk=item.pk), {"text": "fine now"})
    processing.judge([item.pk])
    PipelineRun.objects.filter(content=item).update(finished_at=timezone.now() - 90 * DAY)
    before = admin_client.get(f"/api/contents/{item.pk}/").json()["run"]
    assert before["revision"] == 2 and before["outcome"] == "accepted"

    assert processing.prune(run_days=30).runs == 1

    assert admin_client.get(f"/api/contents/{item.pk}/").json()["run"] == before
    html = admin_client.get(f"/c/{item.pk}/").content.decode()
    assert "<strong>No spam</strong> kept it." in html
    assert list(PipelineRun.objects.values_list("revision", flat=True)) == [2]


def test_a_dry_run_counts_and_deletes_nothing(make_stash):
    stash = make_stash("audit")
    old, recent = make_items(stash, 2)
    add_runs(old, 50, 45, 40)
    add_runs(recent, 40, 2)
    Content.objects.filter(pk=recent.pk).update(processed_at=timezone.now() - 2 * DAY)
    [held] = make_items(stash, 1, Status.HELD, days_ago=100)

    out = run("--dry-run", "--items", "30")

    assert out.splitlines()[0].startswith("Would delete 1 pipeline run(s) finished before ")
    assert out.splitlines()[1].startswith("Would delete 1 accepted, rejected or failed item(s) processed before ")
    assert out.splitlines()[1].endswith(", with their 3 run(s).")
    assert (Content.objects.count(), PipelineRun.objects.count()) == (3, 5)
    # And the real thing does what the dry run said.
    report = processing.prune(run_days=30, item_days=30)
    assert (report.runs, report.items, report.item_runs) == (1, 1, 3)
    assert set(Content.objects.values_list("pk", flat=True)) == {recent.pk, held.pk}


def test_verbosity_2_reports_each_batch_on_standard_error(make_stash):
    [item] = make_items(make_stash("audit"), 1, Status.REJECTED, days_ago=100)
    add_runs(item, 100, 99, 98)
    [other] = make_items(Stash.objects.get(slug="audit"), 1, days_ago=1)
    add_runs(other, 50, 40, 1)

    out, err = io.StringIO(), io.StringIO()
    call_command("stash_prune", "-v", "2", "--batch-size", "2", "--items", "60", stdout=out, stderr=err)
    lines = out.getvalue().splitlines()

    # Rows deleted so far: the item and its 3 runs, then 2 more runs; then how many in how long.
    *steps, last = err.getvalue().splitlines()
    assert [line.split(",")[0] for line in steps] == ["prune: 4 rows", "prune: 6 rows"]
    assert re.fullmatch(r"prune: 6 rows in \d+\.\d s(, [\d,]+/s)?", last)
    assert lines[0].startswith("Deleted 2 pipeline run(s) ")
    assert lines[1].startswith("Deleted 1 accepted, rejected or failed item(s) ")
    assert other.runs.count() == 1


# --- items -----------------------------------------------------------------------------------


def test_items_go_only_with_the_option_and_only_final_old_ones(make_stash, django_user_model):
    stash = make_stash("audit")
    reviewer = django_user_model.objects.create_user("rita")
    old = {
        status: make_items(stash, 1, status, days_ago=100)[0]
        for status in (Status.ACCEPTED, Status.REJECTED, Status.FAILED, Status.HELD)
    }
    waiting = make_items(stash, 1, Status.PENDING) + make_items(stash, 1, Status.PROCESSING)
    Content.objects.filter(pk__in=[item.pk for item in waiting]).update(created_at=timezone.now() - 100 * DAY)
    recent = make_items(stash, 1, Status.REJECTED, days_ago=10)[0]
    # Judged long ago, but overturned by a reviewer yesterday: it counts from the review.
    reviewed = make_items(
        stash, 1, Status.ACCEPTED, days_ago=100, reviewed_by=reviewer, reviewed_at=timezone.now() - DAY
    )[0]
    for item in Content.objects.all():
        add_runs(item, 100)

    run()
    assert Content.objects.count() == 8

    out = run("--items", "90")

    gone = {old[Status.ACCEPTED].pk, old[Status.REJECTED].pk, old[Status.FAILED].pk}
    assert set(Content.objects.values_list("pk", flat=True)) == {
        old[Status.HELD].pk,
        *(item.pk for item in waiting),
        recent.pk,
        reviewed.pk,
    }
    assert not PipelineRun.objects.filter(content_id__in=gone).exists()
    assert PipelineRun.objects.count() == 5
    assert out.splitlines()[1].startswith("Deleted 3 accepted, rejected or failed item(s) processed before ")
    assert out.splitlines()[1].endswith(", with their 3 run(s).")


def test_items_alone_takes_its_days_from_the_setting_and_needs_one(make_stash, settings):
    stash = make_stash("audit")
    make_items(stash, 2, days_ago=100)
    make_items(stash, 1, days_ago=20)
    settings.STASH_ITEM_RETENTION_DAYS = None

    with pytest.raises(CommandError, match=r"^--items needs a number of days, or STASH_ITEM_RETENTION_DAYS set\.$"):
        run("--items")
    assert Content.objects.count() == 3

    settings.STASH_ITEM_RETENTION_DAYS = 50
    assert "Deleted 2 accepted, rejected or failed item(s)" in run("--items")
    assert Content.objects.count() == 1


def test_the_queue_feed_reads_on_after_its_oldest_items_are_pruned(make_stash, admin_client):
    stash = make_stash("audit")
    old = make_items(stash, 3, days_ago=100)
    make_items(stash, 1, Status.REJECTED, days_ago=50)
    new = make_items(stash, 2, days_ago=5)
    url = "/api/stashes/audit/queue/"
    assert [item["seq"] for item in admin_client.get(url).json()["results"]] == [1, 2, 3, 4, 5]

    assert processing.prune(item_days=30).items == 4

    body = admin_client.get(url).json()
    assert [(item["seq"], item["id"]) for item in body["results"]] == [(4, str(new[0].pk)), (5, str(new[1].pk))]
    assert body["next_after"] == 5
    # A consumer that had read part of the pruned start goes on where it was.
    assert [item["seq"] for item in admin_client.get(url, {"after": 2}).json()["results"]] == [4, 5]
    assert [item["seq"] for item in admin_client.get(url, {"after": 4}).json()["results"]] == [5]
    assert admin_client.get(url, {"after": 5}).json()["results"] == []
    # New acceptances continue the numbering.
    audit = Stash.objects.get(pk=stash.pk)
    item = processing.submit(audit, {"text": "later"})[0]
    processing.judge([item.pk])
    assert [entry["seq"] for entry in admin_client.get(url, {"after": 5}).json()["results"]] == [6]
    assert not Content.objects.filter(pk__in=[item.pk for item in old]).exists()


# --- batches and locks -------------------------------------------------------------------------


def test_2500_runs_go_in_three_batches_of_at_most_1000(make_stash):
    stash = make_stash("audit")
    items = make_items(stash, 5)
    for item in items:
        add_runs(item, *[40] * 500, 1)  # 500 old runs each, and a recent latest one
    batches = []

    with CaptureQueriesContext(connection) as queries:
        report = processing.prune(run_days=30, batch_size=1000, on_batch=batches.append)

    deletes = [q["sql"] for q in queries.captured_queries if q["sql"].startswith('DELETE FROM "stash_pipelinerun"')]
    assert len(deletes) == 3
    assert [(batch.batches, batch.runs) for batch in batches] == [(1, 1000), (2, 2000), (3, 2500)]
    assert report.runs == 2500 and report.batches == 3 and report.finished
    assert PipelineRun.objects.count() == 5


def test_items_go_in_batches_too(make_stash):
    stash = make_stash("audit")
    for item in make_items(stash, 25, Status.REJECTED, days_ago=100):
        add_runs(item, 100, 99)
    batches = []

    report = processing.prune(item_days=30, batch_size=10, on_batch=batches.append)

    assert [(batch.items, batch.item_runs) for batch in batches] == [(10, 20), (20, 40), (25, 50)]
    assert (report.items, report.item_runs, report.runs, report.batches) == (25, 50, 0, 3)
    assert not Content.objects.exists() and not PipelineRun.objects.exists()


def test_a_prune_out_of_time_stops_between_batches_and_the_next_goes_on(make_stash):
    [item] = make_items(make_stash("audit"), 1)
    add_runs(item, *[40] * 30, 1)

    report = processing.prune(run_days=30, batch_size=10, budget=0)

    assert (report.runs, report.batches, report.finished) == (10, 1, False)
    assert processing.prune(run_days=30, batch_size=10).runs == 20
    assert item.runs.count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("what", ["runs", "items"])
def test_each_batch_commits_so_saves_and_verdicts_go_on_between_batches(make_stash, monkeypatch, what):
    """Between two batches another connection sees the first batch's rows gone, can lock rows
    of it without waiting (PostgreSQL) and can save and judge an item (on SQLite that needs the
    database's write lock). All of it fails if the prune held one transaction across batches."""
    monkeypatch.setattr(processing.publishing, "send", lambda batch, stash=None, queue="": None)
    stash = make_stash("audit", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    if what == "runs":
        [old] = make_items(stash, 1)
        add_runs(old, *[40] * 2500, 1)
        model, first_batch = PipelineRun, list(PipelineRun.objects.order_by("pk").values_list("pk", flat=True)[:1000])
    else:
        make_items(stash, 2500, Status.REJECTED, days_ago=100)
        model, first_batch = Content, list(Content.objects.order_by("pk").values_list("pk", flat=True)[:1000])
    fresh = processing.submit(stash, {"text": "before"})[0]
    seen = []

    def other_connection():
        try:
            if connection.vendor == "sqlite":
                with connection.cursor() as cursor:
                    cursor.execute("PRAGMA busy_timeout = 0")  # fail at once rather than wait
            with transaction.atomic():
                locked = list(
                    model.objects.select_for_update(nowait=True).filter(pk__in=first_batch).values_list("pk", flat=True)
                )
            left = model.objects.count()
            edited = Content.objects.select_related("stash").get(pk=fresh.pk)
            processing.edit_payload(edited, {"text": "edited meanwhile"})
            processing.judge([fresh.pk])
            seen.append((locked, left, Content.objects.get(pk=fresh.pk).status))
        except Exception as exc:  # reported to the test below
            seen.append(exc)
        finally:
            connection.close()

    def between_batches(report):
        if report.batches == 1:
            thread = threading.Thread(target=other_connection)
            thread.start()
            thread.join(60)

    if what == "runs":
        report = processing.prune(run_days=30, batch_size=1000, on_batch=between_batches)
    else:
        report = processing.prune(run_days=30, item_days=30, batch_size=1000, on_batch=between_batches)

    assert seen == [([], 2501 - 1000, Status.ACCEPTED)]
    assert report.batches == 3
    assert Content.objects.get(pk=fresh.pk).payload == {"text": "edited meanwhile"}


# --- bad options -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["--days", "-1"], r"^The run retention must be a whole number of days, 0 or more \(not -1\)\.$"),
        (["--items", "-5"], r"^The item retention must be a whole number of days, 0 or more \(not -5\)\.$"),
        (["--items", "-1"], r"^The item retention must be a whole number of days, 0 or more \(not -1\)\.$"),
        (["--batch-size", "0"], r"^The batch size must be 1 to 10,000 \(not 0\)\.$"),
        (["--batch-size", "20000"], r"^The batch size must be 1 to 10,000 \(not 20000\)\.$"),
        (["--days", "ten"], r"argument --days: invalid int value: 'ten'"),
        (["--batch-size"], r"argument --batch-size: expected one argument"),
    ],
)
def test_bad_options_are_refused_and_nothing_is_deleted(make_stash, args, message):
    [item] = make_items(make_stash("audit"), 1, days_ago=100)
    add_runs(item, 100, 99)

    with pytest.raises(CommandError, match=message):
        run(*args)
    assert (Content.objects.count(), PipelineRun.objects.count()) == (1, 2)


# --- on beat -----------------------------------------------------------------------------------


def test_beat_runs_the_prune_task_daily():
    entry = django_settings.CELERY_BEAT_SCHEDULE["stash-prune"]
    assert entry["task"] == tasks.prune.name == "stash.tasks.prune"
    assert entry["task"] in app.tasks
    schedule = entry["schedule"]
    assert isinstance(schedule, crontab)
    assert (schedule.hour, schedule.minute, len(schedule.day_of_week), len(schedule.day_of_month)) == (
        {django_settings.STASH_PRUNE_HOUR},
        {30},
        7,
        31,
    )


def test_the_task_prunes_runs_and_items_only_when_their_retention_is_set(make_stash, settings):
    stash = make_stash("audit")
    old_item, new_item = make_items(stash, 1, days_ago=100) + make_items(stash, 1, days_ago=1)
    add_runs(old_item, 100, 99)
    add_runs(new_item, 50, 1)
    settings.STASH_RUN_RETENTION_DAYS, settings.STASH_ITEM_RETENTION_DAYS = 30, None

    tasks.prune.apply()
    assert Content.objects.count() == 2
    assert PipelineRun.objects.count() == 2

    settings.STASH_ITEM_RETENTION_DAYS = 60
    tasks.prune.apply()
    assert list(Content.objects.values_list("pk", flat=True)) == [new_item.pk]
    assert new_item.runs.count() == 1
