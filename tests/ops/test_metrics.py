"""/metrics: django-prometheus's series and stash's, read from the database; who may scrape it."""

import ipaddress
import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from stash import processing, tasks
from stash.models import Content, EventCount, HookConfig, PipelineRun
from stash.processing import worker_counts

from ..support.metrics_support import scrape

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE = "203.0.113.9"  # an address of no allowed network


def items(stash, status, n, **fields):
    created = [Content.objects.create(stash=stash, payload={"n": i}) for i in range(n)]
    Content.objects.filter(pk__in=[c.pk for c in created]).update(status=status, **fields)
    return created


# --- the series ----------------------------------------------------------------------------


def test_one_page_has_the_django_series_and_the_stash_series(client, make_stash):
    make_stash("audit")
    client.get("/healthz")
    page = scrape(client)
    assert (
        page.value(
            "django_http_responses_total_by_status_view_method_total", status="200", view="healthz", method="GET"
        )
        >= 1
    )
    assert page.value("stash_items", stash="audit", status="pending") == 0
    assert page.text.count("# TYPE stash_items gauge") == 1


def test_without_the_database_the_page_still_answers_and_says_so(client, make_stash, django_db_blocker, caplog):
    make_stash("audit")
    assert scrape(client).value("stash_metrics_up") == 1
    with django_db_blocker.block():
        page = scrape(client)
    assert page.value("stash_metrics_up") == 0
    assert "stash_items" not in page.names()
    assert "django_http_requests_total_by_method_total" in page.names()
    assert "Could not read the stash_ series." in caplog.text


def test_items_are_counted_by_stash_and_status_with_every_status_shown(client, make_stash):
    audit, other = make_stash("audit"), make_stash("other")
    items(audit, "accepted", 3)
    items(audit, "rejected", 2)
    items(other, "held", 1)

    page = scrape(client)
    assert page.value("stash_items", stash="audit", status="accepted") == 3
    assert page.value("stash_items", stash="audit", status="rejected") == 2
    assert page.value("stash_items", stash="audit", status="held") == 0
    assert page.value("stash_items", stash="other", status="held") == 1
    assert page.value("stash_items", stash="other", status="failed") == 0


def test_queue_lag_is_the_age_of_the_oldest_pending_or_processing_item(client, make_stash):
    audit, quiet = make_stash("audit"), make_stash("quiet")
    now = timezone.now()
    items(audit, "pending", 1, updated_at=now - timedelta(hours=2))
    items(audit, "processing", 1, updated_at=now - timedelta(minutes=30))
    items(audit, "pending", 1)
    items(audit, "accepted", 1, updated_at=now - timedelta(days=3))  # judged: not waiting
    items(quiet, "rejected", 1, updated_at=now - timedelta(days=3))

    page = scrape(client)
    assert 2 * 3600 <= page.value("stash_queue_lag_seconds", stash="audit") < 2 * 3600 + 60
    assert page.value("stash_queue_lag_seconds", stash="quiet") == 0

    Content.objects.filter(stash=audit, status="pending", updated_at__lt=now - timedelta(hours=1)).update(
        status="accepted"
    )
    assert 30 * 60 <= scrape(client).value("stash_queue_lag_seconds", stash="audit") < 31 * 60


def test_hook_verdicts_and_times_are_the_hook_configs_counts(client, make_stash):
    stash = make_stash(
        "audit", hooks=[("require_fields", {"fields": ["text"]}), ("keyword_blocklist", {"words": ["spam"]})]
    )
    require, blocklist = stash.hooks.in_order()
    payloads = [{"title": "no text"}, {"text": "spam here"}, {"text": "hello"}, {"text": "hi"}]
    processing.judge([Content.objects.create(stash=stash, payload=p).pk for p in payloads])

    page = scrape(client)
    for config, kept, dropped in ((require, 3, 1), (blocklist, 2, 1)):
        config.refresh_from_db()
        labels = {"stash": "audit", "config": config.pk, "hook": config.hook}
        assert page.value("stash_hook_verdicts_total", **labels, outcome="kept") == kept == config.kept_count
        assert page.value("stash_hook_verdicts_total", **labels, outcome="dropped") == dropped == config.dropped_count
        assert page.value("stash_hook_verdicts_total", **labels, outcome="error") == 0
        assert page.value("stash_hook_overturned_total", **labels) == 0
        assert page.value("stash_hook_duration_seconds_count", **labels) == config.runs_count == kept + dropped
        assert page.value("stash_hook_duration_seconds_sum", **labels) == pytest.approx(config.time_total_us / 1e6)
        # Every run of the window is in the +Inf bucket; the buckets only grow.
        assert page.value("stash_hook_recent_duration_seconds_bucket", **labels, le="+Inf") == kept + dropped
        assert page.value("stash_hook_recent_duration_seconds_bucket", **labels, le="30.0") == kept + dropped
    assert page.value("stash_run_recent_duration_seconds_bucket", stash="audit", le="+Inf") == 4
    assert page.value("stash_run_recent_duration_seconds_gcount", stash="audit") == 4
    assert page.value("stash_run_recent_duration_seconds_gsum", stash="audit") == pytest.approx(
        sum(PipelineRun.objects.values_list("duration_ms", flat=True)) / 1000
    )


def test_the_recent_histograms_read_only_the_latest_runs(client, make_stash, monkeypatch):
    from stash.processing import stats

    stash = make_stash("audit", hooks=[("require_fields", {"fields": ["text"]})])
    processing.judge([Content.objects.create(stash=stash, payload={"text": str(i)}).pk for i in range(5)])
    monkeypatch.setattr(stats, "WINDOW", 3)
    page = scrape(client)
    assert page.value("stash_run_recent_duration_seconds_bucket", stash="audit", le="+Inf") == 3
    assert (
        page.value(
            "stash_hook_duration_seconds_count", stash="audit", config=stash.hooks.get().pk, hook="require_fields"
        )
        == 5
    )  # the summary counts every run


def test_sweeper_recoveries_and_failures_are_counted_by_the_task_and_the_command(client, make_stash, settings):
    stash = make_stash("audit")
    past = timezone.now() - timedelta(minutes=5)
    items(stash, "pending", 2, lease_until=past)  # lost messages
    items(stash, "processing", 1, lease_until=past, attempts=settings.STASH_MAX_ATTEMPTS)  # died every time

    tasks.sweep()
    page = scrape(client)
    assert page.value("stash_sweeper_recovered_total") == 2
    assert page.value("stash_sweeper_failed_total") == 1
    assert Content.objects.filter(status="failed").count() == 1

    Content.objects.filter(status="pending").update(lease_until=past)
    call_command("stash_sweep", stdout=open(os.devnull, "w"))
    assert scrape(client).value("stash_sweeper_recovered_total") == 4

    tasks.sweep()  # nothing to do: nothing counted, nothing written
    assert scrape(client).value("stash_sweeper_recovered_total") == 4


def test_sinks_delivered_by_a_task_have_delivery_series_from_the_start(client, make_stash):
    stash = make_stash("audit", hooks=[("require_fields", {"fields": ["text"]}), ("test_flaky_sink", {"failures": 0})])
    require, sink = stash.hooks.in_order()
    labels = {"stash": "audit", "config": sink.pk, "hook": "test_flaky_sink"}

    page = scrape(client)
    assert page.value("stash_sink_deliveries_total", **labels, outcome="delivered") == 0
    assert page.value("stash_sink_retries_total", **labels) == 0
    assert (
        "stash_sink_retries_total",
        frozenset({"stash": "audit", "config": str(require.pk), "hook": "require_fields"}.items()),
    ) not in page.samples

    worker_counts.add(worker_counts.SINK_DELIVERED, config_id=sink.pk)
    worker_counts.add(worker_counts.SINK_DELIVERED, 2, config_id=sink.pk)
    worker_counts.add(worker_counts.SINK_RETRIED, config_id=sink.pk)
    worker_counts.add(worker_counts.SINK_FAILED, config_id=sink.pk)
    page = scrape(client)
    assert page.value("stash_sink_deliveries_total", **labels, outcome="delivered") == 3
    assert page.value("stash_sink_deliveries_total", **labels, outcome="failed") == 1
    assert page.value("stash_sink_retries_total", **labels) == 1


def test_the_counts_of_a_deleted_sink_go_with_it_and_later_ones_are_dropped(make_stash):
    stash = make_stash("audit", hooks=[("test_flaky_sink", {"failures": 0})])
    sink = stash.hooks.get()
    worker_counts.add(worker_counts.SINK_DELIVERED, config_id=sink.pk)
    sink_pk = sink.pk
    HookConfig.objects.filter(pk=sink_pk).delete()
    assert not EventCount.objects.exists()

    worker_counts.add(worker_counts.SINK_DELIVERED, config_id=sink_pk)  # a delivery that finished after the delete
    assert not EventCount.objects.exists()
    assert worker_counts.totals() == {}


# --- who may scrape ------------------------------------------------------------------------


def test_loopback_may_scrape_without_a_token(client):
    assert client.get("/metrics").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="::1").status_code == 200
    # A server listening on IPv6 and IPv4 alike sees IPv4 clients as mapped addresses.
    assert client.get("/metrics", REMOTE_ADDR="::ffff:127.0.0.1").status_code == 200


def test_another_address_is_refused_and_nothing_is_read(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/metrics", REMOTE_ADDR=OUTSIDE)
    assert response.status_code == 403
    assert "STASH_METRICS_TOKEN" in response.content.decode()
    assert b"stash_items" not in response.content


def test_the_token_opens_it_from_anywhere_and_a_wrong_or_missing_one_does_not(client, settings):
    settings.STASH_METRICS_TOKEN = "s3cret-metrics-token"
    assert (
        client.get("/metrics", REMOTE_ADDR=OUTSIDE, HTTP_AUTHORIZATION="Bearer s3cret-metrics-token").status_code == 200
    )
    assert (
        client.get("/metrics", REMOTE_ADDR=OUTSIDE, HTTP_AUTHORIZATION="bearer s3cret-metrics-token").status_code == 200
    )
    for wrong in (
        "Bearer s3cret-metrics-tokeN",
        "Bearer ",
        "Bearer",
        "Token s3cret-metrics-token",
        "s3cret-metrics-token",
        "Bearer s3cret-metrics-token-and-more",
        "Bearer s3cret-metrics-tökén",
    ):
        assert client.get("/metrics", REMOTE_ADDR=OUTSIDE, HTTP_AUTHORIZATION=wrong).status_code == 403, wrong
    assert client.get("/metrics", REMOTE_ADDR=OUTSIDE).status_code == 403


def test_with_no_token_set_no_bearer_header_opens_it(client, settings):
    settings.STASH_METRICS_TOKEN = ""
    assert client.get("/metrics", REMOTE_ADDR=OUTSIDE, HTTP_AUTHORIZATION="Bearer ").status_code == 403
    assert client.get("/metrics", REMOTE_ADDR=OUTSIDE, HTTP_AUTHORIZATION="Bearer").status_code == 403


def test_the_allowed_networks_replace_loopback(client, settings):
    settings.STASH_METRICS_ALLOWED_NETWORKS = [ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("fd00::/8")]
    assert client.get("/metrics", REMOTE_ADDR="10.20.30.40").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="fd00::5").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="11.0.0.1").status_code == 403
    assert client.get("/metrics").status_code == 403  # loopback is no longer in

    settings.STASH_METRICS_ALLOWED_NETWORKS = []
    settings.STASH_METRICS_TOKEN = "only-the-token"
    assert client.get("/metrics").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer only-the-token").status_code == 200


def test_a_forwarded_address_counts_only_from_a_declared_proxy(client, settings):
    # Anyone may send X-Forwarded-For: without a declared proxy it is ignored.
    assert client.get("/metrics", REMOTE_ADDR=OUTSIDE, HTTP_X_FORWARDED_FOR="127.0.0.1").status_code == 403

    settings.STASH_TRUSTED_PROXIES = [ipaddress.ip_network("192.168.0.0/16")]
    assert client.get("/metrics", REMOTE_ADDR="192.168.1.1", HTTP_X_FORWARDED_FOR="127.0.0.1").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="192.168.1.1", HTTP_X_FORWARDED_FOR=OUTSIDE).status_code == 403


def test_only_get_is_allowed(client):
    assert client.post("/metrics").status_code == 405


def test_plain_http_scrapes_are_not_redirected_to_https(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/metrics").status_code == 200
    assert client.get("/admin/").status_code == 301


def settings_from_env(**env):
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("STASH_", "DJANGO_")) and key not in ("DATABASE_URL", "CELERY_BROKER_URL")
    }
    environment.update(
        {
            "DJANGO_SETTINGS_MODULE": "hooksite.settings",
            "STASH_VAR_DIR": os.environ.get("STASH_VAR_DIR", str(ROOT / "var")),
            "SECRET_KEY": "x",
            **env,
        }
    )
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; print(json.dumps("
        "[[str(n) for n in s.STASH_METRICS_ALLOWED_NETWORKS], s.CELERY_WORKER_SEND_TASK_EVENTS, "
        "s.CELERY_TASK_SEND_SENT_EVENT]))"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )


def test_settings_from_the_environment():
    redis = "redis://127.0.0.1:6379/4"
    done = settings_from_env(CELERY_BROKER_URL=redis)
    assert json.loads(done.stdout.splitlines()[-1]) == [["127.0.0.0/8", "::1/128"], True, True]
    done = settings_from_env(
        CELERY_BROKER_URL=redis, STASH_TASK_EVENTS="0", STASH_METRICS_ALLOWED_NETWORKS="10.0.0.0/8, 192.168.1.20"
    )
    assert json.loads(done.stdout.splitlines()[-1]) == [["10.0.0.0/8", "192.168.1.20/32"], False, False]
    # The filesystem broker (the embedded default) sends no task events unless asked to.
    assert json.loads(settings_from_env().stdout.splitlines()[-1])[1:] == [False, False]
    assert json.loads(settings_from_env(STASH_TASK_EVENTS="1").stdout.splitlines()[-1])[1:] == [True, True]
    done = settings_from_env(STASH_METRICS_ALLOWED_NETWORKS="")
    assert json.loads(done.stdout.splitlines()[-1])[0] == []
    done = settings_from_env(STASH_METRICS_ALLOWED_NETWORKS="10.0.0.0/8,localhost")
    assert done.returncode != 0
    assert "STASH_METRICS_ALLOWED_NETWORKS" in done.stderr and "localhost" in done.stderr
