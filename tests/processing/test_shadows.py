"""Shadow runs: a draft or a version judged beside the live pipeline on a share of live saves, changing nothing;
its report, its limits, promoting it."""

import datetime

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from stash import processing, tasks
from stash.core import documents
from stash.db import publishing
from stash.models import Content, Example, PipelineVersion, Shadow, ShadowRun
from stash.processing import Clock, shadow_runs

from ..support.shadows import rows_of, run_shadow_messages, save_and_judge

pytestmark = pytest.mark.django_db

LIVE = [("require_fields", {"fields": ["text"]}), ("keyword_blocklist", {"words": ["spam"]})]
WEBHOOK = {
    "hook": "webhook",
    "label": "Notify",
    "params": {"url": "https://93.184.216.34/hook", "secret": "s3cret-s3cret-s3cret"},
}


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=LIVE)


def draft(stash, words=("spam", "eggs"), extra=()):
    """The stash's pipeline as exported, with the blocklist's words changed (and ``extra`` hooks added)."""
    document = processing.export_document(stash)
    for hook in document["hooks"]:
        if hook["hook"] == "keyword_blocklist":
            hook["params"]["words"] = list(words)
    document["hooks"] += [dict(hook, position=len(document["hooks"]) + index) for index, hook in enumerate(extra, 1)]
    return document


PAYLOADS = [{"text": "hello"}, {"text": "spam here"}, {"text": "eggs and ham"}, {"title": "no text"}] * 5


def test_a_shadow_of_a_draft_reports_where_it_disagrees_and_changes_no_verdict(
    audit, broker, django_capture_on_commit_callbacks
):
    shadow = processing.start_shadow(audit, document=draft(audit), percent=100, count=1000)
    items = save_and_judge(audit, PAYLOADS, django_capture_on_commit_callbacks)
    live = {item.pk: (item.status, item.payload) for item in Content.objects.filter(stash=audit)}

    # Judged in the live worker after the verdicts: no message carries an item (on Redis, one writes the runs).
    assert run_shadow_messages(broker) == 0

    shadow.refresh_from_db()
    report = processing.shadow_report(shadow)
    assert (report["items"], report["agreed"], report["disagreed"]) == (20, 15, 5)
    assert report["matrix"] == {"accepted/accepted": 5, "accepted/rejected": 5, "rejected/rejected": 10}
    assert report["deciders"] == [{"live": "", "shadow": "keyword_blocklist", "count": 5}]
    (first, *_rest) = report["disagreements"]
    assert first["live"]["verdict"] == "accepted" and first["shadow"]["verdict"] == "rejected"
    assert [entry["outcome"] for entry in first["live"]["trail"]] == ["kept", "kept"]
    assert [entry["outcome"] for entry in first["shadow"]["trail"]] == ["kept", "dropped"]
    # The shadow's trail is kept where the verdicts differ, the only place the report shows it.
    assert not ShadowRun.objects.filter(shadow=shadow, agreed=True).exclude(shadow_trail=[]).exists()
    assert report["time"]["mean_ms"] is not None and report["time"]["p95_ms"] is not None
    # The live verdicts and payloads are as they were, and no item was judged again.
    assert {item.pk: (item.status, item.payload) for item in Content.objects.filter(stash=audit)} == live
    assert all(Content.objects.get(pk=item.pk).runs.count() == 1 for item in items)


def test_the_share_is_chosen_per_item_and_the_same_every_time(audit, broker, django_capture_on_commit_callbacks):
    shadow = processing.start_shadow(audit, document=draft(audit), percent=50, count=1000)
    items = save_and_judge(audit, [{"text": f"item {n}"} for n in range(200)], django_capture_on_commit_callbacks)

    run_shadow_messages(broker)

    chosen = set(ShadowRun.objects.filter(shadow=shadow).values_list("content_id", flat=True))
    assert chosen == {item.pk for item in items if shadow_runs.sampled(shadow.pk, item.pk, 50)}
    assert 60 < len(chosen) < 140


def test_a_shadow_finishes_at_its_count(audit, broker, django_capture_on_commit_callbacks):
    shadow = processing.start_shadow(audit, version=audit.config_version, percent=100, count=7)
    save_and_judge(audit, PAYLOADS, django_capture_on_commit_callbacks)
    run_shadow_messages(broker)

    shadow.refresh_from_db()
    assert (shadow.status, shadow.items, ShadowRun.objects.filter(shadow=shadow).count()) == ("finished", 7, 7)
    assert shadow.ended_at is not None
    assert sum(shadow.matrix.values()) == 7
    # Finished, it is offered nothing more.
    save_and_judge(audit, PAYLOADS[:4], django_capture_on_commit_callbacks)
    assert run_shadow_messages(broker) == 0


def test_a_shadow_ends_at_its_time_even_when_nothing_is_judged(audit):
    shadow = processing.start_shadow(audit, document=draft(audit), percent=10, minutes=5)
    Shadow.objects.filter(pk=shadow.pk).update(ends_at=timezone.now() - datetime.timedelta(seconds=1))

    assert [s.status for s in processing.shadows_of(audit)] == ["finished"]
    assert processing.running_shadow(audit) is None


def test_a_stopped_shadow_records_nothing_more(audit, broker, django_capture_on_commit_callbacks):
    shadow = processing.start_shadow(audit, document=draft(audit), percent=100, count=100)
    items = save_and_judge(audit, PAYLOADS[:4], django_capture_on_commit_callbacks)
    run_shadow_messages(broker)  # on Redis: the gathered runs written
    processing.stop_shadow(shadow)

    save_and_judge(audit, PAYLOADS[4:8], django_capture_on_commit_callbacks)
    assert processing.run_shadow(shadow.pk, rows_of(items)) == 0  # a message sent before the stop, run after it

    shadow.refresh_from_db()
    assert (shadow.status, shadow.items) == ("stopped", 4)
    with pytest.raises(processing.ShadowConflict, match="not running: it is stopped"):
        processing.stop_shadow(shadow)


def test_a_duplicate_message_records_nothing(audit, broker, django_capture_on_commit_callbacks):
    items = save_and_judge(audit, PAYLOADS[:4], django_capture_on_commit_callbacks)
    shadow = processing.start_shadow(audit, document=draft(audit), percent=100, count=100)
    args = [shadow.pk, rows_of(items)]

    assert processing.run_shadow(*args) == 4
    assert processing.run_shadow(*args) == 0
    shadow.refresh_from_db()
    assert shadow.items == ShadowRun.objects.filter(shadow=shadow).count() == 4


def test_a_shadow_judges_the_payload_as_submitted_before_live_transforms(
    make_stash, broker, django_capture_on_commit_callbacks
):
    stash = make_stash("tidy", hooks=[("normalize_text", {"lowercase": True}), ("keyword_blocklist", {"words": ["x"]})])
    document = processing.export_document(stash)
    document["hooks"] = [
        {
            "hook": "regex",
            "label": "Shouting",
            "params": {"field": "text", "pattern": "[A-Z]{4}", "mode": "must_not_match"},
        }
    ]
    processing.start_shadow(stash, document=document, percent=100, count=10)
    (item,) = save_and_judge(stash, [{"text": "SPAM"}], django_capture_on_commit_callbacks)
    item.refresh_from_db()
    assert (item.status, item.payload) == ("accepted", {"text": "spam"})

    run_shadow_messages(broker)

    (run,) = ShadowRun.objects.all()
    assert (run.live_verdict, run.shadow_verdict) == ("accepted", "rejected")
    item.refresh_from_db()
    assert item.payload == {"text": "spam"}


def test_a_shadows_sinks_are_off(audit, broker, django_capture_on_commit_callbacks):
    shadow = processing.start_shadow(audit, document=draft(audit, extra=[WEBHOOK]), percent=100, count=100)
    save_and_judge(audit, PAYLOADS[:4], django_capture_on_commit_callbacks)
    run_shadow_messages(broker)  # on Redis: the gathered runs written

    assert [m["name"] for m in broker.messages] == [publishing.PROCESS_TASK]  # no delivery
    assert Shadow.objects.get(pk=shadow.pk).items == 4


def test_with_no_shadow_running_judging_asks_for_none_but_once_a_second(audit, broker, monkeypatch):
    first = Content.objects.create(stash=audit, payload={"text": "one"})
    processing.judge([first.pk])  # reads which shadows run (none)
    second = Content.objects.create(stash=audit, payload={"text": "two"})

    with CaptureQueriesContext(connection) as queries:
        processing.judge([second.pk])

    assert not [query for query in queries if "stash_shadow" in query["sql"]]
    monkeypatch.setattr(shadow_runs, "LOOKUP_SECONDS", 0)
    third = Content.objects.create(stash=audit, payload={"text": "three"})
    with CaptureQueriesContext(connection) as queries:
        processing.judge([third.pk])
    assert len([query for query in queries if "stash_shadow" in query["sql"]]) == 1


def test_one_shadow_per_stash_at_a_time(audit, make_stash):
    processing.start_shadow(audit, document=draft(audit), percent=10, count=10)

    with pytest.raises(processing.ShadowConflict, match="A shadow of audit is running"):
        processing.start_shadow(audit, version=1, percent=10, count=10)
    other = make_stash("other", hooks=LIVE)
    assert processing.start_shadow(other, version=other.config_version, percent=10, count=10).status == "running"


@pytest.mark.parametrize(
    "given, field, message",
    [
        ({"percent": 0, "count": 5}, "percent", "from 1 to 100"),
        ({"percent": 101, "count": 5}, "percent", "from 1 to 100"),
        ({"percent": "half", "count": 5}, "percent", "whole number"),
        ({"percent": True, "count": 5}, "percent", "whole number"),
        ({"percent": None, "count": 5}, "percent", "required"),
        ({"percent": 5, "count": 0}, "count", "from 1 to"),
        ({"percent": 5}, "count", "count of items, a number of minutes"),
        ({"percent": 5, "minutes": 0}, "minutes", "from 1 to"),
    ],
)
def test_bad_input_names_its_field_and_starts_nothing(audit, given, field, message):
    with pytest.raises(ValidationError) as raised:
        processing.start_shadow(audit, document=draft(audit), **given)

    assert message in " ".join(raised.value.message_dict[field])
    assert not Shadow.objects.exists()


def test_a_document_or_a_version_one_of_them(audit):
    with pytest.raises(ValidationError, match="one of them"):
        processing.start_shadow(audit, percent=5, count=5)
    with pytest.raises(ValidationError, match="one of them"):
        processing.start_shadow(audit, document=draft(audit), version=1, percent=5, count=5)
    with pytest.raises(ValidationError, match="audit has no version 99"):
        processing.start_shadow(audit, version=99, percent=5, count=5)
    bad = draft(audit)
    bad["hooks"][0]["hook"] = "no_such_hook"
    with pytest.raises(processing.InvalidDocument, match=r"hooks\[0\]\.hook"):
        processing.start_shadow(audit, document=bad, percent=5, count=5)
    assert not Shadow.objects.exists()


def test_a_draft_keeps_the_stored_secrets_and_ids_of_the_hooks_it_matches(make_stash):
    stash = make_stash("hooks", hooks=[("require_fields", {"fields": ["text"]}), WEBHOOK])
    exported = processing.export_document(stash)
    assert "secret" not in exported["hooks"][1]["params"]

    shadow = processing.start_shadow(stash, document=exported, percent=5, count=5)

    ids = list(stash.hooks.in_order().values_list("pk", flat=True))
    assert [hook["id"] for hook in shadow.document["hooks"]] == ids
    assert shadow.document["hooks"][1]["params"]["secret"] == WEBHOOK["params"]["secret"]
    assert "examples" not in shadow.document
    assert "secret" not in processing.described_shadow(shadow, document=True)["document"]["hooks"][1]["params"]


def test_promoting_makes_one_version_and_ends_the_shadow(audit):
    shadow = processing.start_shadow(audit, document=draft(audit), percent=50, count=100)
    before = PipelineVersion.objects.filter(stash=audit).count()

    plan = processing.promote_shadow(shadow)

    audit.refresh_from_db()
    assert PipelineVersion.objects.filter(stash=audit).count() == before + 1
    assert plan.version.number == audit.config_version
    assert audit.hooks.get(hook="keyword_blocklist").params["words"] == ["spam", "eggs"]
    shadow.refresh_from_db()
    assert (shadow.status, shadow.promoted_version) == ("promoted", audit.config_version)
    assert "promote of shadow" in plan.version.summary
    with pytest.raises(processing.ShadowConflict, match="promoted already"):
        processing.promote_shadow(shadow)


def test_promoting_checks_the_golden_examples_first(audit):
    Example.objects.create(stash=audit, name="eggs pass", payload={"text": "eggs"}, verdict="accepted")
    shadow = processing.start_shadow(audit, document=draft(audit), percent=50, count=100)
    version = audit.config_version

    with pytest.raises(processing.ExamplesBroken, match="eggs pass"):
        processing.promote_shadow(shadow)

    audit.refresh_from_db()
    assert audit.config_version == version
    shadow.refresh_from_db()
    assert shadow.status == "running"


def test_a_shadow_of_a_version_runs_that_version(audit, broker, django_capture_on_commit_callbacks):
    old = audit.config_version
    processing.import_document(audit, draft(audit, words=["hello"]))
    processing.start_shadow(audit, version=old, percent=100, count=100)
    save_and_judge(audit, [{"text": "hello"}, {"text": "spam"}], django_capture_on_commit_callbacks)

    run_shadow_messages(broker)

    assert dict(ShadowRun.objects.values_list("live_verdict", "shadow_verdict")) == {
        "rejected": "accepted",
        "accepted": "rejected",
    }
    assert documents.FORMAT == Shadow.objects.get().document["format"]


def test_the_sweeper_ends_a_shadow_past_its_time(audit):
    shadow = processing.start_shadow(audit, document=draft(audit), percent=10, minutes=1)
    Shadow.objects.filter(pk=shadow.pk).update(ends_at=timezone.now() - datetime.timedelta(seconds=1))

    tasks.sweep.apply()

    shadow.refresh_from_db()
    assert (shadow.status, shadow.ended_at is not None) == ("finished", True)


def test_items_that_no_longer_fit_in_the_message_are_sent_again(
    audit, broker, django_capture_on_commit_callbacks, settings
):
    settings.STASH_TIME_LIMIT_MARGIN = 1
    items = save_and_judge(audit, PAYLOADS[:3], django_capture_on_commit_callbacks)
    shadow = processing.start_shadow(audit, document=draft(audit), percent=100, count=100)
    args = [shadow.pk, rows_of(items)]
    broker.messages.clear()
    budget = 4.0  # the two hooks' default timeouts, 2 s each

    # A message whose limit no item ever fits in: each sent alone, with a limit it fits in.
    assert processing.run_shadow(*args, clock=Clock(limit=budget)) == 0
    assert [(len(m["args"][1]), m["time_limit"]) for m in broker.messages] == [(1, budget + 1)] * 3
    assert processing.run_shadow(*broker.messages[0]["args"], clock=Clock(limit=budget + 1)) == 1
    assert Shadow.objects.get(pk=shadow.pk).items == 1


def test_items_whose_shadow_no_longer_fits_in_the_live_message_go_to_a_message_of_their_own(
    audit, broker, django_capture_on_commit_callbacks, settings
):
    settings.STASH_TIME_LIMIT_MARGIN = 1
    shadow = processing.start_shadow(audit, document=draft(audit), percent=100, count=100)
    with django_capture_on_commit_callbacks(execute=True):
        item = Content.objects.create(stash=audit, payload={"text": "eggs"})
    broker.messages.clear()
    # The live hooks' budget (4 s) and the margin fill a 5 s message: its verdict is given, and the shadow's
    # hooks, which would need as much again, are left to a message.
    with django_capture_on_commit_callbacks(execute=True):
        processing.judge([item.pk], clock=Clock(limit=5.0))

    assert Content.objects.get(pk=item.pk).status == "accepted"
    (message,) = [m for m in broker.messages if m["name"] == publishing.SHADOW_TASK]
    assert message["args"] == [shadow.pk, [[str(item.pk), item.revision, "accepted", ""]]]
    assert Shadow.objects.get(pk=shadow.pk).items == 0
    run_shadow_messages(broker)
    assert ShadowRun.objects.get(shadow=shadow).shadow_verdict == "rejected"  # "eggs" is on the draft's list
