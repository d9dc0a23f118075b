"""A stash's pipeline as a document: round trips, checked imports, versions that keep every change."""

import json
import random

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from stash import processing
from stash.core import documents, expressions
from stash.models import Content, Example, HookConfig, PipelineVersion, Stash

pytestmark = pytest.mark.django_db

#: A pipeline that uses every kind of field a document carries.
VARIED = [
    {"hook": "normalize_text", "label": "Tidy", "params": {"lowercase": True}},
    {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
    {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam", "free money"]}},
    {
        "hook": "min_score",
        "label": "Likely",
        "params": {"field": "data.probability", "min": 0.3},
        "condition": "has(payload.data) && has(payload.data.probability)",
        "on_error": "hold",
    },
    {
        "hook": "regex",
        "label": "No shouting",
        "params": {"field": "text", "pattern": "!!!", "mode": "must_not_match"},
        "mode": "observe",
    },
    # A timeout no run comes near, even in a process paused for a while (a full garbage collection on
    # a loaded machine): a timed-out step would give the two stashes different verdicts.
    {"hook": "max_size", "label": "Small", "params": {"max_bytes": 300}, "timeout_ms": 5000},
    {
        "hook": "keyword_blocklist",
        "label": "Sure",
        "params": {"words": ["zzz"]},
        "on_error": "hold",
        "condition": "has(payload.data) && payload.data.probability > 0.5",
    },  # an error (held) without a probability
    {"hook": "redact_pii", "label": "Off", "params": {}, "enabled": False},
]
WEBHOOK = {
    "hook": "webhook",
    "label": "Notify",
    "params": {"url": "https://93.184.216.34/hook", "secret": "s3cret-s3cret-s3cret"},
}


def varied_payloads(count, seed=7):
    """Payloads that take every branch of ``VARIED``: missing text, spam, low and high scores, shouting, big."""
    rng = random.Random(seed)
    words = ["hello", "Spam", "free money", "WORLD", "ok", "!!!", "news", "data"]
    payloads = []
    for index in range(count):
        payload = {}
        if rng.random() > 0.1:
            payload["text"] = " ".join(rng.choice(words) for _ in range(rng.randint(1, 6)))
        if rng.random() > 0.5:
            payload["data"] = rng.choice(
                [{"probability": round(rng.random(), 2)}, {"probability": "high"}, {"other": 1}]
            )
        if rng.random() > 0.9:
            payload["blob"] = "x" * rng.randint(100, 400)
        payload["n"] = index
        payloads.append(payload)
    return payloads


def judge_all(stash, payloads):
    items = [Content.objects.create(stash=stash, payload=payload) for payload in payloads]
    processing.judge([item.pk for item in items])
    return list(
        Content.objects.filter(pk__in=[item.pk for item in items])
        .order_by("payload__n")
        .values_list("status", "reason", "payload")
    )


def test_an_exported_pipeline_imported_into_a_fresh_stash_judges_1000_varied_items_alike(
    make_stash, broker, monkeypatch
):
    # Both stashes must judge alike: a condition's wall-clock budget, which a busy machine can exhaust
    # on either side alone, is not what this compares (tests/core/test_expressions.py tests it).
    monkeypatch.setattr(expressions, "MAX_SECONDS", 60)
    staging = make_stash("staging", hooks=VARIED, on_error="skip", max_payload_bytes=5000)
    document = json.loads(documents.dumps(processing.export_document(staging)))  # as a file would carry it

    plan = processing.import_document("production", document)

    production = Stash.objects.get(slug="production")
    assert plan.created and plan.applied
    assert plan.changes == ["new stash production", *[f"added {hook['label']}" for hook in VARIED]]
    assert processing.export_document(production)["hooks"] == document["hooks"]
    assert (production.on_error, production.max_payload_bytes) == ("skip", 5000)
    payloads = varied_payloads(1000)
    staged, produced = judge_all(staging, payloads), judge_all(production, payloads)
    assert staged == produced, [pair for pair in zip(staged, produced, strict=True) if pair[0] != pair[1]][:5]
    statuses = {status for status, _reason, _payload in staged}
    assert statuses == {"accepted", "rejected", "held"}  # the items took every way through


def test_an_import_with_one_bad_hook_changes_nothing_and_names_the_hook_and_the_field(make_stash):
    stash = make_stash("audit", hooks=VARIED[:3])
    document = processing.export_document(stash)
    document["hooks"][0]["params"] = {"lowercase": "yes"}
    document["hooks"].append({"hook": "keyword_blocklist", "label": "Late", "params": {"words": ["x"]}})
    before = (stash.config_version, list(stash.hooks.values_list("pk", "params")), stash.versions.count())

    with pytest.raises(processing.InvalidDocument) as refused:
        processing.import_document(stash, document)

    assert list(refused.value.errors) == ["hooks[0].params"]
    assert "Tidy (normalize_text)" in refused.value.errors["hooks[0].params"][0]
    assert "lowercase" in refused.value.errors["hooks[0].params"][0]
    assert refused.value.nested() == {"hooks": {"0": {"params": refused.value.errors["hooks[0].params"]}}}
    stash.refresh_from_db()
    assert (stash.config_version, list(stash.hooks.values_list("pk", "params")), stash.versions.count()) == before


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d.update(format="other"), "format"),
        (lambda d: d.update(format_version=2), "format_version"),
        (lambda d: d.update(extra=1), "extra"),
        (lambda d: d["stash"].update(on_error="explode"), "stash.on_error"),
        (lambda d: d["stash"].update(max_payload_bytes="big"), "stash.max_payload_bytes"),
        (lambda d: d["hooks"][1].update(hook="no_such_hook"), "hooks[1].hook"),
        (lambda d: d["hooks"][1].update(condition="payload.("), "hooks[1].condition"),
        (lambda d: d["hooks"][1].update(enabled=0), "hooks[1].enabled"),
        (lambda d: d["hooks"][1].update(timeout_ms="5"), "hooks[1].timeout_ms"),
        (lambda d: d["hooks"][1].update(colour="red"), "hooks[1].colour"),
        (lambda d: d["hooks"][1].pop("hook"), "hooks[1].hook"),
        (lambda d: d["hooks"][1].update(position=1), "hooks"),
        (lambda d: d.update(examples=[{"name": "x", "payload": [], "verdict": "accepted"}]), "examples[0].payload"),
        (lambda d: d.update(examples=[{"name": "x", "payload": {}, "verdict": "maybe"}]), "examples[0].verdict"),
    ],
)
def test_each_kind_of_bad_document_is_refused_by_its_path(make_stash, change, path):
    stash = make_stash("audit", hooks=VARIED[:3])
    document = processing.export_document(stash)
    change(document)
    version = stash.config_version

    with pytest.raises(processing.InvalidDocument) as refused:
        processing.import_document(stash, document)

    assert path in refused.value.errors
    stash.refresh_from_db()
    assert stash.config_version == version


def test_a_document_that_is_not_an_object_is_refused(make_stash):
    with pytest.raises(processing.InvalidDocument, match="JSON object"):
        processing.import_document(make_stash("audit"), ["hooks"])


def test_a_dry_run_says_what_would_change_and_changes_nothing(make_stash):
    stash = make_stash("audit", hooks=VARIED[:3])
    document = processing.export_document(stash)
    document["hooks"][2]["params"]["words"].append("scam")
    document["hooks"].insert(0, {"hook": "max_size", "label": "Tiny", "params": {"max_bytes": 10}})
    del document["hooks"][1]
    for hook in document["hooks"]:
        hook.pop("position", None)

    plan = processing.import_document(stash, document, dry_run=True)

    assert plan.changes == [
        "removed Tidy",
        "added Tiny",
        'No spam: words ["spam", "free money"] → ["spam", "free money", "scam"]',
    ]
    assert not plan.applied
    assert processing.export_document(Stash.objects.get(pk=stash.pk))["hooks"] != document["hooks"]


def test_an_import_keeps_matched_hooks_their_ids_counters_and_secrets_and_bumps_the_version_once(make_stash):
    stash = make_stash("audit", hooks=[*VARIED[:3], WEBHOOK])
    HookConfig.objects.filter(stash=stash).update(runs_count=5)
    ids = list(stash.hooks.in_order().values_list("pk", flat=True))
    document = processing.export_document(stash)
    assert "secret" not in document["hooks"][3]["params"]
    document["hooks"].reverse()
    document["hooks"][1]["params"]["words"] = ["eggs"]
    for hook in document["hooks"]:
        hook.pop("position")
    version = stash.config_version

    plan = processing.import_document(stash, document)

    stash.refresh_from_db()
    assert stash.config_version == version + 1
    assert plan.version.number == stash.config_version
    assert list(stash.hooks.in_order().values_list("pk", flat=True)) == ids[::-1]
    assert set(stash.hooks.values_list("runs_count", flat=True)) == {5}
    assert stash.hooks.get(hook="webhook").params["secret"] == "s3cret-s3cret-s3cret"
    assert plan.version.summary == (
        'import: No spam: words ["spam", "free money"] → ["eggs"]; order: Notify, No spam, Needs text, Tidy'
    )


def test_a_new_hook_that_needs_a_secret_the_document_leaves_out_is_refused_naming_the_field(make_stash):
    stash = make_stash("audit", hooks=VARIED[:1])
    document = processing.export_document(make_stash("other", hooks=[WEBHOOK]))

    with pytest.raises(processing.InvalidDocument) as refused:
        processing.import_document(stash, document)

    assert "secret" in refused.value.errors["hooks[0].params"][0]
    assert "Notify (webhook)" in refused.value.errors["hooks[0].params"][0]


def test_an_import_never_renames_the_stash_and_an_unchanged_document_records_nothing(make_stash):
    stash = make_stash("audit", hooks=VARIED[:2])
    document = processing.export_document(stash)
    document["stash"]["slug"] = "elsewhere"
    versions = stash.versions.count()

    plan = processing.import_document(stash, document)

    assert (plan.changes, plan.applied) == ([], False)
    assert stash.versions.count() == versions
    assert Stash.objects.filter(slug="elsewhere").count() == 0


def test_an_import_with_examples_replaces_the_stash_examples(make_stash):
    stash = make_stash("audit", hooks=VARIED[1:3])
    Example.objects.create(stash=stash, name="old", payload={"text": "hi"}, verdict="accepted")
    document = processing.export_document(stash)
    document["examples"] = [{"name": "spam", "payload": {"text": "spam"}, "verdict": "rejected", "hook": "No spam"}]

    plan = processing.import_document(stash, document)

    assert plan.applied and "examples replaced (1)" in plan.changes
    assert list(stash.examples.values_list("name", "verdict", "hook")) == [("spam", "rejected", "No spam")]


# --- versions --------------------------------------------------------------------------------------


def test_every_change_is_kept_as_a_version_with_who_when_and_what(make_stash, client):
    stash = make_stash("audit", hooks=VARIED[1:3])
    config = stash.hooks.get(label="No spam")
    config.params = {"words": ["ham"]}
    config.save()
    HookConfig.objects.reorder(stash, list(stash.hooks.order_by("-position").values_list("pk", flat=True)))
    config.delete()

    stash.refresh_from_db()
    versions = list(stash.versions.order_by("number"))
    assert [version.number for version in versions] == list(range(1, stash.config_version + 1))
    assert [version.summary for version in versions[-3:]] == [
        'No spam: words ["spam", "free money"] → ["ham"]',
        "order: No spam, Needs text",
        "removed No spam",
    ]


def test_a_change_through_the_api_is_kept_with_its_author(make_stash, admin_user, client):
    stash = make_stash("audit", hooks=VARIED[1:3])
    client.force_login(admin_user)
    config = stash.hooks.get(label="No spam")

    answer = client.patch(f"/api/stashes/audit/hooks/{config.pk}/", {"enabled": False}, content_type="application/json")

    assert answer.status_code == 200
    version = stash.versions.order_by("-number").first()
    assert (version.created_by, version.summary) == (admin_user, "No spam disabled")


def test_a_run_names_the_version_that_judged_it_after_the_hook_is_edited_reordered_and_deleted(make_stash, broker):
    stash = make_stash("audit", hooks=VARIED[1:3])
    item = Content.objects.create(stash=stash, payload={"text": "spam here"})
    processing.judge([item.pk])
    run = item.runs.get()
    config = stash.hooks.get(label="No spam")
    config.params = {"words": ["eggs"]}
    config.save()
    HookConfig.objects.reorder(stash, list(stash.hooks.order_by("-position").values_list("pk", flat=True)))
    config.delete()

    version = type(run).objects.get(pk=run.pk).version

    assert version.number == run.config_version
    hooks = version.document["hooks"]
    assert [(hook["label"], hook["params"]) for hook in hooks] == [
        ("Needs text", {"fields": ["text"]}),
        ("No spam", {"words": ["spam", "free money"]}),
    ]
    assert run.trail[1]["config_id"] == hooks[1]["id"]


def test_workers_build_the_pipeline_of_the_version_they_were_given(make_stash, broker):
    stash = make_stash("audit", hooks=VARIED[1:3])
    # A write that no version recorded (bulk updates of params skip nothing, but a raw edit would):
    # what judges is the version's document, so what the runs name is what ran.
    HookConfig.objects.filter(stash=stash, label="No spam").update(params={"words": ["hello"]})
    stash.refresh_from_db()
    PipelineVersion.objects.filter(stash=stash, number=stash.config_version).update(
        document=PipelineVersion.objects.get(stash=stash, number=stash.config_version - 1).document
    )
    item = Content.objects.create(stash=stash, payload={"text": "hello"})

    with CaptureQueriesContext(connection) as queries:
        processing.judge([item.pk])

    item.refresh_from_db()
    assert item.status == "accepted"  # the version's words, not the row's
    assert sum("stash_pipelineversion" in query["sql"] for query in queries.captured_queries) == 1


def test_restoring_a_version_gives_back_its_hooks_as_a_new_version(make_stash):
    stash = make_stash("audit", hooks=VARIED[1:3])
    first = stash.config_version
    stash.hooks.get(label="No spam").delete()
    HookConfig.objects.create(stash=stash, hook="max_size", label="Tiny", params={"max_bytes": 5})

    plan = processing.restore(stash, first)

    stash.refresh_from_db()
    assert plan.applied and stash.config_version == plan.version.number
    assert plan.version.summary.startswith(f"restore of version {first}: ")
    restored = PipelineVersion.objects.get(stash=stash, number=first).document["hooks"]
    current = plan.version.document["hooks"]
    assert [(h["hook"], h["label"], h["params"]) for h in current] == [
        (h["hook"], h["label"], h["params"]) for h in restored
    ]
    with pytest.raises(PipelineVersion.DoesNotExist, match="no version 99"):
        processing.restore(stash, 99)


def test_comparing_two_versions_lists_the_changes_and_a_diff_without_secrets(make_stash):
    stash = make_stash("audit", hooks=[VARIED[1], WEBHOOK])
    before = stash.config_version
    webhook = stash.hooks.get(hook="webhook")
    webhook.params = {**webhook.params, "secret": "another-secret-value"}
    webhook.save()
    stash.refresh_from_db()

    diff = processing.compare_versions(stash, before, stash.config_version)

    assert diff.changes == ["Notify: secret changed (secret, not shown)"]  # named, never shown
    assert "secret" not in "\n".join(diff.lines)
    assert "s3cret" not in json.dumps(processing.shown_version(diff.old))
    with pytest.raises(PipelineVersion.DoesNotExist):
        processing.compare_versions(stash, before, 99)


def test_a_stash_made_and_filled_in_one_change_has_one_version(db):
    user = get_user_model().objects.create_user("ann")
    from stash.db.versioning import authored_by, one_change

    with authored_by(lambda: user), one_change():
        stash = Stash.objects.create(slug="new", name="New")
        for spec in VARIED[:3]:
            HookConfig.objects.create(stash=stash, **spec)

    version = stash.versions.get()
    assert (version.number, version.created_by, version.summary) == (1, user, "created with 3 hooks")
    assert len(version.document["hooks"]) == 3


# --- golden examples ----------------------------------------------------------------------------------


def test_examples_pass_or_say_what_they_expected(make_stash):
    stash = make_stash("audit", hooks=VARIED[1:3])
    Example.objects.create(stash=stash, name="fine", payload={"text": "hi"}, verdict="accepted")
    Example.objects.create(
        stash=stash,
        name="spam",
        payload={"text": "spam"},
        verdict="rejected",
        hook="No spam",
        reason_code="blocked_word",
    )
    Example.objects.create(
        stash=stash,
        name="wrong",
        payload={"text": "spam"},
        verdict="rejected",
        hook="Needs text",
        reason_code="missing",
    )

    results = {result.name: result for result in processing.run_examples(stash)}

    assert results["fine"].passed and results["spam"].passed
    assert results["wrong"].problems == [
        "expected reason code 'missing', got 'blocked_word'",
        "expected 'Needs text' to decide, got 'No spam'",
    ]


def test_a_change_that_breaks_an_example_is_refused_when_the_stash_blocks_and_made_when_it_warns(make_stash):
    stash = make_stash("audit", hooks=VARIED[1:3])
    Example.objects.create(stash=stash, name="spam", payload={"text": "spam"}, verdict="rejected")
    document = processing.export_document(stash)
    document["hooks"][1]["enabled"] = False

    with pytest.raises(processing.ExamplesBroken, match="spam: expected rejected, got accepted"):
        processing.import_document(stash, document)
    assert stash.hooks.get(label="No spam").enabled

    stash.examples_policy = "warn"
    stash.save()
    plan = processing.import_document(stash, document)
    assert plan.applied and [result.name for result in plan.broken] == ["spam"]
    assert not stash.hooks.get(label="No spam").enabled


def test_an_item_becomes_an_example_expecting_its_verdict(make_stash, admin_user, broker):
    stash = make_stash("audit", hooks=VARIED[:3])
    item = Content.objects.create(stash=stash, payload={"text": "Free   Money"})
    processing.judge([item.pk])
    item.refresh_from_db()

    example = processing.example_from(item, admin_user)

    assert (example.stash, example.verdict, example.hook, example.reason_code) == (
        stash,
        "rejected",
        "No spam",
        "blocked_word",
    )
    assert example.payload == {"text": "Free   Money"}  # as submitted, before the transform
    assert processing.run_examples(stash)[0].passed
    assert processing.example_from(item).name == f"item {str(item.pk)[:8]} (2)"
    waiting = Content.objects.create(stash=stash, payload={"text": "x"})
    with pytest.raises(ValueError, match="no verdict yet"):
        processing.example_from(waiting)


def test_an_empty_payload_is_an_example_too(make_stash):
    stash = make_stash("audit", hooks=VARIED[1:2])
    document = processing.export_document(stash)
    document["examples"] = [{"name": "nothing", "payload": {}, "verdict": "rejected", "hook": "Needs text"}]

    plan = processing.import_document(stash, document)

    assert plan.applied and [result.passed for result in plan.results] == [True]
