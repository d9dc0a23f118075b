"""The failure store: hook errors, timeouts and items given up on, grouped by hook, error type and
pipeline version; filtered by stash and time; re-driven by group, with what became of the items."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from stash import hooks, processing
from stash.models import Content, Failure

pytestmark = pytest.mark.django_db

BROKEN = {"odd": True}


class Picky(hooks.Filter):
    """Raises on payloads with an odd ``n`` while broken (a bug a deploy fixes); keeps the rest."""

    def filter(self, item):
        if BROKEN["odd"] and item.payload["n"] % 2:
            raise KeyError("colour")
        return self.keep()


@pytest.fixture
def picky(make_stash, register_temporarily):
    BROKEN["odd"] = True
    register_temporarily("test_picky", Picky)
    stash = make_stash("picky", hooks=[{"hook": "test_picky", "label": "Picky", "params": {}}])
    yield stash
    BROKEN["odd"] = True


def judged(stash, payloads):
    items = [Content.objects.create(stash=stash, payload=payload) for payload in payloads]
    processing.judge([item.pk for item in items])
    return items


def test_a_hook_that_raises_for_one_kind_of_payload_makes_one_group(picky):
    items = judged(picky, [{"n": n} for n in range(10)])

    (group,) = processing.failures.groups()
    assert (group.stash, group.hook, group.label, group.kind) == (picky, "test_picky", "Picky", "error")
    assert (group.error_type, group.config_version) == ("KeyError", picky.config_version)
    assert (group.count, group.items) == (5, 5)
    assert group.first_seen <= group.last_seen
    assert group.example.message == "Picky: KeyError: 'colour'"
    run = group.example_run
    assert run.content_id in {item.pk for item in items if item.payload["n"] % 2}
    assert [entry["outcome"] for entry in run.trail] == ["error"]
    # The stash's on_error (reject) decided the odd ones; the even ones never failed.
    statuses = {item.payload["n"] % 2: Content.objects.get(pk=item.pk).status for item in items}
    assert statuses == {0: "accepted", 1: "rejected"}


def test_another_pipeline_version_is_another_group(picky):
    before = picky.config_version
    judged(picky, [{"n": 1}])
    config = picky.hooks.get()
    config.timeout_ms = 1500  # a change: the next runs are judged by a new version
    config.save()
    judged(picky, [{"n": 3}, {"n": 5}])

    counts = sorted((g.config_version, g.count) for g in processing.failures.groups())
    assert counts == [(before, 1), (before + 1, 2)]


def test_an_item_given_up_on_is_kept_as_a_failure(picky):
    item = Content.objects.create(stash=picky, payload={"n": 2})
    Content.objects.filter(pk=item.pk).update(
        status="processing", attempts=settings.STASH_MAX_ATTEMPTS, lease_until=timezone.now() - timedelta(seconds=1)
    )
    assert processing.sweep().failed == 1

    (group,) = processing.failures.groups()
    assert (group.kind, group.error_type, group.hook, group.items) == ("gave_up", "worker stopped", "", 1)
    assert group.example.message.startswith("gave up after")


def test_groups_filter_by_stash(picky, make_stash, register_temporarily):
    other = make_stash("other", hooks=[{"hook": "test_picky", "params": {}}])
    judged(picky, [{"n": 1}])
    judged(other, [{"n": 1}, {"n": 3}])

    assert [g.count for g in processing.failures.groups(stash=other)] == [2]
    assert [g.count for g in processing.failures.groups(stash=picky)] == [1]
    assert len(processing.failures.groups()) == 2


def test_groups_filter_by_time(picky):
    judged(picky, [{"n": 1}, {"n": 3}, {"n": 5}])
    old = Failure.objects.order_by("pk").first()
    Failure.objects.filter(pk=old.pk).update(at=timezone.now() - timedelta(days=3))

    now = timezone.now()
    assert [g.count for g in processing.failures.groups(since=now - timedelta(days=1))] == [2]
    assert [g.count for g in processing.failures.groups(until=now - timedelta(days=2))] == [1]
    assert processing.failures.groups(since=now + timedelta(minutes=1)) == []


def test_redrive_after_the_fix_accepts_the_group(picky):
    judged(picky, [{"n": n} for n in range(6)])
    (group,) = processing.failures.groups()
    assert processing.redriving.outcome(group.key) == {}  # never re-driven

    BROKEN["odd"] = False  # the fix is deployed
    done = processing.redriving.redrive(group.key)
    assert (done.sent, done.left_out) == (3, 0)
    assert processing.redriving.outcome(group.key) == {
        "waiting": 3,
        "accepted": 0,
        "rejected": 0,
        "held": 0,
        "still_failing": 0,
    }

    processing.judge(list(processing.failures.items_of(group.key).values_list("pk", flat=True)))
    assert processing.redriving.outcome(group.key) == {
        "waiting": 0,
        "accepted": 3,
        "rejected": 0,
        "held": 0,
        "still_failing": 0,
    }


def test_redrive_before_the_fix_says_they_still_fail(picky):
    judged(picky, [{"n": 1}, {"n": 3}])
    (group,) = processing.failures.groups()

    processing.redriving.redrive(group.key)
    processing.judge(list(processing.failures.items_of(group.key).values_list("pk", flat=True)))

    assert processing.redriving.outcome(group.key)["still_failing"] == 2
    assert processing.failures.group(group.key).count == 4  # the new failures joined their group


def test_redrive_leaves_peoples_decisions_alone(picky, admin_user):
    picky.hooks.update(on_error="hold")
    picky.save()
    items = judged(picky, [{"n": 1}, {"n": 3}])
    processing.approve(Content.objects.filter(pk=items[0].pk), admin_user)
    (group,) = processing.failures.groups()

    done = processing.redriving.redrive(group.key)
    assert (done.sent, done.left_out, done.people.who()) == (1, 1, "admin")
    assert Content.objects.get(pk=items[0].pk).status == "accepted"
    assert Content.objects.get(pk=items[1].pk).status == "pending"
