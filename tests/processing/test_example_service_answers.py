"""A golden example may give an asynchronous hook's answer in place of its outside service
(``Example.service_answers``): its run goes on with that answer, so the example checks the hooks
after it; without one the example stops where the item would wait. The service is never asked."""

import pytest
from django.core.exceptions import ValidationError

from stash import processing
from stash.models import Example, Stash

from ..support.examples import vendor_stash
from .conftest import SERVICE_SECRET

pytestmark = pytest.mark.django_db

DROP = {"Vendor": {"outcome": "drop", "reason": "toxic (0.97)"}}
KEEP = {"Vendor": {"outcome": "keep"}}


@pytest.fixture
def stash(make_stash, settings, service):
    """Vendor (async) first, then a blocklist of "spam" (a check the mock lets the run reach)."""
    return vendor_stash(make_stash, settings, url=service.url, secret=SERVICE_SECRET)


def example(stash, name, payload, verdict, **fields):
    return Example.objects.create(stash=stash, name=name, payload=payload, verdict=verdict, **fields)


def results(stash):
    return {result.name: result for result in processing.run_examples(stash)}


def test_a_mocked_drop_rejects_with_the_services_code_and_says_the_example_gave_it(stash, service):
    example(
        stash, "toxic", {"text": "hello"}, "rejected", reason_code="moderation", hook="Vendor", service_answers=DROP
    )

    [result] = processing.run_examples(stash)

    assert result.passed, result.problems
    assert (result.verdict, result.code, result.hook) == ("rejected", "moderation", "Vendor")
    assert result.reason == "the service's answer, given by the example: toxic (0.97)"
    assert result.given == ("Vendor: dropped",)
    assert result.as_dict()["given"] == ["Vendor: dropped"]
    assert service.requests == []


def test_a_mocked_keep_lets_the_later_hooks_decide(stash, service):
    example(
        stash,
        "spam",
        {"text": "buy spam"},
        "rejected",
        reason_code="blocked_word",
        hook="No spam",
        service_answers=KEEP,
    )
    example(stash, "clean", {"text": "hello"}, "accepted", service_answers=KEEP)
    example(
        stash, "held", {"text": "hello"}, "held", service_answers={"Vendor": {"outcome": "hold", "reason": "unsure"}}
    )

    found = results(stash)

    assert all(result.passed for result in found.values()), {n: r.problems for n, r in found.items()}
    assert found["spam"].given == ("Vendor: kept",) and found["spam"].hook == "No spam"
    assert found["held"].hook == "Vendor"
    assert service.requests == []


def test_without_a_mock_the_example_expects_waiting(stash, service):
    example(stash, "waits", {"text": "buy spam"}, "waiting")
    example(stash, "wrong", {"text": "buy spam"}, "rejected")

    found = results(stash)

    assert found["waits"].passed and found["waits"].given == ()
    assert "expected rejected, got waiting" in found["wrong"].problems
    assert service.requests == []


def test_a_mock_left_unused_by_a_renamed_hook_is_named_when_the_example_fails(stash):
    example(stash, "toxic", {"text": "hello"}, "rejected", service_answers=DROP)
    example(stash, "still fine", {"text": "buy spam"}, "waiting", service_answers=KEEP)
    stash.hooks.filter(label="Vendor").update(label="Other vendor")
    stash.refresh_from_db()

    found = results(stash)

    assert found["toxic"].problems == [
        "expected rejected, got waiting",
        "its service answer for 'Vendor' was not used: no enabled asynchronous hook has this label",
    ]
    assert found["still fine"].passed  # an unused answer alone breaks nothing (a disabled hook, say)


@pytest.mark.parametrize(
    "answers, message",
    [
        ([], "A JSON object: a hook's label to the service's answer."),
        ({"Vendor": {"outcome": "maybe"}}, 'Vendor: the outcome must be keep, drop or hold, not "maybe".'),
        ({"Vendor": {"outcome": "drop", "reason": 3}}, "Vendor: the reason must be a string."),
        ({"Vendor": "drop"}, 'Vendor: must be {"outcome": "keep", "drop" or "hold", "reason": "..."}.'),
        (
            {"No spam": {"outcome": "keep"}},
            "No spam: the stash has no asynchronous hook of this label (they are: Vendor).",
        ),
    ],
)
def test_a_bad_mock_is_refused_naming_the_field(stash, answers, message):
    bad = Example(stash=stash, name="bad", payload={"text": "x"}, verdict="accepted", service_answers=answers)

    with pytest.raises(ValidationError) as caught:
        bad.full_clean()

    assert caught.value.message_dict == {"service_answers": [message]}


def test_export_and_import_keep_the_mock_and_a_new_stash_runs_it(stash, service):
    example(stash, "toxic", {"text": "hello"}, "rejected", reason_code="moderation", service_answers=DROP)
    document = processing.export_document(stash)
    assert document["examples"][0]["service_answers"] == DROP
    document["hooks"][0]["params"]["secret"] = SERVICE_SECRET  # an export leaves secrets out

    plan = processing.import_document("copy", document)

    copied = Stash.objects.get(slug="copy")
    assert plan.applied and [result.status for result in plan.results] == ["passed"]
    assert copied.examples.get().service_answers == DROP
    assert processing.export_document(copied)["examples"] == document["examples"]
    assert service.requests == []


def test_an_import_refuses_a_mock_for_a_hook_the_document_does_not_make_asynchronous(stash):
    document = processing.export_document(stash)
    document["examples"] = [
        {
            "name": "toxic",
            "payload": {"text": "x"},
            "verdict": "rejected",
            "service_answers": {"No spam": {"outcome": "drop"}},
        }
    ]

    with pytest.raises(processing.InvalidDocument) as caught:
        processing.import_document("vendor", document)

    assert caught.value.errors == {
        "examples[0].service_answers": [
            "toxic: No spam: the stash has no asynchronous hook of this label (they are: Vendor)."
        ]
    }
    assert not stash.examples.exists()


def test_a_document_without_service_answers_imports_examples_without_mocks(stash):
    document = processing.export_document(stash)
    document["examples"] = [{"name": "waits", "payload": {"text": "x"}, "verdict": "waiting"}]

    plan = processing.import_document("vendor", document)

    assert [result.status for result in plan.results] == ["passed"]
    assert stash.examples.get().service_answers == {}


def test_a_changed_mock_is_run_again_not_answered_from_the_cache(stash, service, settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    toxic = example(stash, "toxic", {"text": "hello"}, "rejected", service_answers=DROP)
    hooks = list(stash.hooks.in_order())

    first = processing.compare_examples(stash, hooks, [toxic], stash.config_version)
    toxic.service_answers = KEEP  # now the live version accepts it too: the live answer is not reused
    second = processing.compare_examples(stash, hooks, [toxic], stash.config_version)

    assert [(r.verdict, r.before, r.status) for r in first] == [("rejected", "passed", "passed")]
    assert [(r.verdict, r.before, r.status) for r in second] == [("accepted", "failed", "already failing")]
