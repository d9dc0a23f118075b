"""The golden examples' guard on pipeline changes through the API: it holds no lock that saves need
while the examples run (a dry run, an import, a hook change), it re-checks a change that another
one overtook, and only examples a change breaks refuse it (a user who may only add examples cannot
veto every change with a wrong or a slow one)."""

import threading
import time

import pytest
from django.db import connection

from stash import processing
from stash.models import Example, HookConfig
from stash.processing import guarding

PIPELINE = "/api/stashes/audit/pipeline/"
HOOKS = "/api/stashes/audit/hooks/"
EXAMPLES = "/api/stashes/audit/examples/"
HOOK_PERMS = ("stash.view_hookconfig", "stash.add_hookconfig", "stash.change_hookconfig", "stash.delete_hookconfig")


@pytest.fixture
def owner(make_user):
    return make_user("olga", "stash.change_stash", "stash.add_content", *HOOK_PERMS, "stash.view_example")


@pytest.fixture
def adder(make_user):
    """May add golden examples, and nothing else."""
    return make_user("adam", "stash.add_example")


@pytest.fixture
def slow_audit(make_stash):
    """audit, with a hook that sleeps ``seconds`` on a payload that says "sleep"."""
    return make_stash(
        "audit",
        hooks=[
            ("require_fields", {"fields": ["text"]}),
            {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}},
            {"hook": "test_sleep", "label": "Slow", "params": {"seconds": 2.5}, "timeout_ms": 0},
        ],
    )


def without_examples(document):
    """The stash's document without its examples: importing it keeps the stash's."""
    return {key: value for key, value in document.items() if key != "examples"}


def statuses(response):
    return {result["name"]: result["status"] for result in response.json()["examples"]}


# --- point 9: only examples a change breaks refuse it ---------------------------------------------


def test_a_user_who_may_only_add_examples_cannot_veto_every_change(api, owner, adder, slow_audit, settings):
    settings.STASH_EXAMPLES_TIMEOUT = 1
    adding = api(adder)
    answers = [
        adding.post(EXAMPLES, example, format="json")
        for example in [
            {"name": "a spam", "payload": {"text": "buy spam"}, "verdict": "rejected"},
            {"name": "b wrong", "payload": {"text": "hello"}, "verdict": "rejected"},  # a wrong expectation
            *[
                {"name": f"c slow {n}", "payload": {"text": "zzz", "sleep": True}, "verdict": "accepted"}
                for n in (1, 2, 3)
            ],
        ]
    ]
    assert [answer.status_code for answer in answers] == [201] * 5
    client = api(owner)
    spam = slow_audit.hooks.get(label="No spam")

    # A change that breaks none of them goes through; the answer of a dry run says how each fares.
    document = without_examples(client.get(PIPELINE).json())
    document["hooks"][1]["params"] = {"words": ["spam", "eggs"]}
    dry = client.put(f"{PIPELINE}?dry_run=1", document, format="json")
    assert dry.status_code == 200
    assert statuses(dry) == {
        "a spam": "passed",
        "b wrong": "already failing",
        "c slow 1": "not run in time",
        "c slow 2": "not run in time",
        "c slow 3": "not run in time",
    }
    assert [result["problems"] for result in dry.json()["examples"]][1:3] == [
        ["expected rejected, got accepted"],
        ["not run in time"],
    ]
    changed = client.patch(f"{HOOKS}{spam.pk}/", {"params": {"words": ["spam", "eggs"]}}, format="json")
    assert changed.status_code == 200
    assert client.put(PIPELINE, document, format="json").status_code == 200
    added = client.post(HOOKS, {"hook": "max_size", "params": {"max_bytes": 10_000}}, format="json")
    assert added.status_code == 201, added.content

    # One that breaks an example that passed is refused, naming that one alone.
    refused = client.patch(f"{HOOKS}{spam.pk}/", {"enabled": False}, format="json")
    assert refused.status_code == 409
    assert [(result["name"], result["status"]) for result in refused.json()["examples"]] == [("a spam", "breaks")]
    assert "a spam: expected rejected, got accepted" in refused.json()["detail"]
    assert "b wrong" not in refused.json()["detail"]
    assert HookConfig.objects.get(pk=spam.pk).enabled


def test_examples_already_failing_do_not_refuse_a_restore_or_an_import(api, owner, audit):
    Example.objects.create(stash=audit, name="wrong", payload={"text": "hello"}, verdict="rejected")
    client = api(owner)
    document = without_examples(client.get(PIPELINE).json())
    document["hooks"] = document["hooks"][:1]  # drops the blocklist: "wrong" still fails, as before
    answer = client.put(PIPELINE, document, format="json")
    assert answer.status_code == 200 and answer.json()["applied"]
    assert statuses(answer) == {"wrong": "already failing"}
    restored = client.post(f"/api/stashes/audit/versions/{answer.json()['version'] - 1}/restore/")
    assert restored.status_code == 200 and statuses(restored) == {"wrong": "already failing"}


def test_the_live_versions_answers_are_reused(api, owner, audit, monkeypatch):
    Example.objects.create(stash=audit, name="spam", payload={"text": "buy spam"}, verdict="rejected")
    client = api(owner)
    document = without_examples(client.get(PIPELINE).json())
    live_runs = []
    real = processing.examples.gather_with_deadline

    def counting(steps, seconds, *told):
        answers, late = real(steps, seconds, *told)
        live_runs.append(sum(1 for before, _after in answers if before is not None))
        return answers, late

    monkeypatch.setattr(processing.examples, "gather_with_deadline", counting)
    first = client.put(f"{PIPELINE}?dry_run=1", document, format="json")
    second = client.put(f"{PIPELINE}?dry_run=1", document, format="json")
    assert statuses(first) == statuses(second) == {"spam": "passed"}
    assert live_runs == [1, 0]  # the second check ran the new pipeline alone


# --- point 8: no lock held while they run ----------------------------------------------------------


def saves_while(busy, client, stash, every=0.05):
    """Save items to ``stash`` through the API until ``busy`` ends; each save's seconds."""
    took = []
    while busy.is_alive():
        started = time.monotonic()
        answer = client.post("/api/contents/", {"stash": stash.slug, "payload": {"text": "a save"}}, format="json")
        took.append(time.monotonic() - started)
        assert answer.status_code == 201, answer.content
        time.sleep(every)
    return took


def in_thread(work):
    def run():
        try:
            work()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.4)  # under way: its examples are running
    return thread


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("change", ["dry run", "import", "hook change"])
def test_saves_to_the_stash_do_not_wait_for_its_examples(api, owner, slow_audit, broker, settings, change):
    settings.STASH_EXAMPLES_TIMEOUT = 10
    Example.objects.create(stash=slow_audit, name="slow", payload={"text": "zzz", "sleep": True}, verdict="accepted")
    client, other = api(owner), api(owner)
    document = without_examples(client.get(PIPELINE).json())
    document["hooks"][1]["params"] = {"words": ["spam", "eggs"]}
    spam = slow_audit.hooks.get(label="No spam")
    answers = []
    started = time.monotonic()
    busy = in_thread(
        lambda: answers.append(
            other.put(f"{PIPELINE}?dry_run=1", document, format="json")
            if change == "dry run"
            else other.put(PIPELINE, document, format="json")
            if change == "import"
            else other.patch(f"{HOOKS}{spam.pk}/", {"params": {"words": ["spam", "eggs"]}}, format="json")
        )
    )
    took = saves_while(busy, client, slow_audit)
    busy.join()
    assert answers[0].status_code == 200, answers[0].content
    assert len(took) >= 10 and max(took) < 1.5, f"a save waited {max(took):.1f} s"
    assert time.monotonic() - started >= 4.5  # the examples ran: 2.5 s on the live version, 2.5 s on the new
    changed = change != "dry run"
    assert (HookConfig.objects.get(pk=spam.pk).params["words"] == ["spam", "eggs"]) is changed


@pytest.mark.django_db(transaction=True)
def test_a_change_overtaken_while_its_examples_run_is_checked_again(api, owner, make_stash, broker):
    """Blocking "eggs" in a disabled hook breaks nothing; enabling that hook breaks nothing; both do.
    The first change, overtaken by the second while its examples run, is checked again against
    what the second left, and refused."""
    stash = make_stash(
        "audit",
        hooks=[
            {"hook": "keyword_blocklist", "label": "Words", "params": {"words": ["spam"]}, "enabled": False},
            {"hook": "test_sleep", "label": "Slow", "params": {"seconds": 1}, "timeout_ms": 0},
        ],
    )
    Example.objects.create(stash=stash, name="eggs", payload={"text": "eggs"}, verdict="accepted")
    Example.objects.create(stash=stash, name="slow", payload={"text": "zzz", "sleep": True}, verdict="accepted")
    words = stash.hooks.get(label="Words")
    answers = []
    busy = in_thread(
        lambda: answers.append(
            api(owner).patch(f"{HOOKS}{words.pk}/", {"params": {"words": ["spam", "eggs"]}}, format="json")
        )
    )
    HookConfig.objects.filter(pk=words.pk).update(enabled=True)  # another change, kept while the examples run
    busy.join()
    assert answers[0].status_code == 409, answers[0].content
    assert [(result["name"], result["status"]) for result in answers[0].json()["examples"]] == [("eggs", "breaks")]
    words.refresh_from_db()
    assert words.enabled and words.params == {"words": ["spam"]}


@pytest.mark.django_db(transaction=True)
def test_a_change_that_keeps_being_overtaken_gives_up_with_a_409(api, owner, audit, broker, monkeypatch):
    Example.objects.create(stash=audit, name="spam", payload={"text": "buy spam"}, verdict="rejected")
    require = audit.hooks.in_order().first()
    real = guarding.compare_examples

    def overtaken(*args):
        HookConfig.objects.filter(pk=require.pk).update(label=f"moved {time.monotonic()}")  # another change
        return real(*args)

    monkeypatch.setattr(guarding, "compare_examples", overtaken)
    blocklist = audit.hooks.in_order().last()
    answer = api(owner).patch(f"{HOOKS}{blocklist.pk}/", {"params": {"words": ["spam", "eggs"]}}, format="json")
    assert answer.status_code == 409
    assert "changed meanwhile, while its golden examples ran" in answer.json()["detail"]
    assert HookConfig.objects.get(pk=blocklist.pk).params == {"words": ["spam"]}
