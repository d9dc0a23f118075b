"""Appeals: a submitter contests a rejection within the window; a person other than the one who
decided upholds or reverses it; a reversal accepts the item and counts against its hook."""

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from stash import processing
from stash.models import Appeal, HookConfig, Review, Statement
from tests.support.appeals import Recorder, rejected

pytestmark = pytest.mark.django_db


@pytest.fixture
def audit(make_stash, register_temporarily):
    register_temporarily("test_recorder", Recorder)
    Recorder.events = []
    return make_stash(
        "audit",
        hooks=[{"hook": "keyword_blocklist", "params": {"words": ["spam"]}, "label": "No spam"}, ("test_recorder", {})],
    )


@pytest.fixture
def people(django_user_model):
    from django.contrib.auth.models import Permission

    change = Permission.objects.get(content_type__app_label="stash", codename="change_content")
    users = {}
    for name in ("sam", "rita", "rob"):
        users[name] = django_user_model.objects.create_user(name, password="pw", email=f"{name}@example.org")
        if name != "sam":
            users[name].user_permissions.add(change)
    return users


def test_an_appeal_within_the_window_is_open_and_shown_on_the_item(audit, people):
    item = rejected(audit, people["sam"])

    appeal = processing.appeal(item, "  It is a recipe, not spam.  ", people["sam"])

    assert (appeal.status, appeal.text, appeal.submitted_by) == ("open", "It is a recipe, not spam.", people["sam"])
    assert processing.appeal_of(item) == appeal
    assert not processing.appealable(item)


def test_a_second_appeal_of_the_same_decision_is_a_conflict_even_once_decided(audit, people):
    item = rejected(audit, people["sam"])
    first = processing.appeal(item, "Wrong.", people["sam"])

    with pytest.raises(processing.AppealConflict, match="appealed already"):
        processing.appeal(item, "Still wrong.", people["sam"])
    processing.decide_appeal(first.pk, "upheld", "", people["rita"])
    with pytest.raises(processing.AppealConflict, match="appealed already"):
        processing.appeal(item, "Really wrong.", people["sam"])


def test_a_late_appeal_is_refused_with_its_deadline(audit, people):
    decided = timezone.now() - timedelta(days=20)
    item = rejected(audit, people["sam"], decided_at=decided)

    with pytest.raises(processing.AppealTooLate, match="The time to appeal ended on") as refused:
        processing.appeal(item, "Wrong.", people["sam"])

    assert refused.value.deadline == decided + timedelta(days=14)
    assert f"{refused.value.deadline:%Y-%m-%d}" in str(refused.value)
    assert not Appeal.objects.exists()


def test_no_appeal_when_the_stash_takes_none_or_the_item_is_not_rejected(audit, people):
    item = rejected(audit, people["sam"])
    audit.appeal_days = 0
    audit.save()
    item.refresh_from_db()
    with pytest.raises(processing.NotAppealable, match="cannot be appealed"):
        processing.appeal(item, "Wrong.", people["sam"])
    assert processing.appeal_deadline(item) is None

    audit.appeal_days = 14
    audit.save()
    accepted = rejected(audit, people["sam"])
    accepted.__class__.objects.filter(pk=accepted.pk).update(status="accepted")
    accepted.refresh_from_db()
    with pytest.raises(processing.NotAppealable, match="Only a rejected item can be appealed; this one is accepted"):
        processing.appeal(accepted, "Wrong.", people["sam"])


def test_the_submitter_must_say_why_in_at_most_5000_characters(audit, people):
    item = rejected(audit, people["sam"])
    with pytest.raises(processing.InvalidStatement, match="Say why"):
        processing.appeal(item, "   ", people["sam"])
    with pytest.raises(processing.InvalidStatement, match="5000 characters"):
        processing.appeal(item, "x" * 5001, people["sam"])
    assert not Appeal.objects.exists()


def test_an_item_rejected_before_statements_has_the_window_from_its_decision(audit, people):
    decided = timezone.now() - timedelta(days=3)
    item = rejected(audit, people["sam"], decided_at=decided, statement=False)

    assert processing.appeal_deadline(item) == decided + timedelta(days=14)
    appeal = processing.appeal(item, "Wrong.", people["sam"])

    statement = appeal.statement
    assert statement.kind == "hook" and statement.hook_config == item.decided_by
    assert "was removed because" in statement.text and statement.appeal_until == decided + timedelta(days=14)


def test_who_made_the_decision_cannot_decide_its_appeal(audit, people):
    item = rejected(audit, people["sam"], reviewer=people["rita"])
    appeal = processing.appeal(item, "Wrong.", people["sam"])

    assert appeal.original_reviewer == people["rita"]
    assert not processing.may_decide(people["rita"], appeal)
    assert not processing.may_decide(people["sam"], appeal)  # no permission to review
    assert processing.may_decide(people["rob"], appeal)
    with pytest.raises(processing.NotYourAppealToDecide, match="another reviewer must decide"):
        processing.decide_appeal(appeal.pk, "reversed", "", people["rita"])
    appeal.refresh_from_db()
    assert appeal.status == "open"


def test_a_reversal_accepts_the_item_counts_against_its_hook_and_sends_only_on_reversed(
    audit, people, django_capture_on_commit_callbacks
):
    item = rejected(audit, people["sam"])
    hook = HookConfig.objects.get(hook="keyword_blocklist")
    statement = Statement.objects.get(content=item)
    appeal = processing.appeal(item, "It is a recipe.", people["sam"])
    Recorder.events.clear()

    with django_capture_on_commit_callbacks(execute=True):
        outcome = processing.decide_appeal(appeal.pk, "reversed", "A recipe indeed.", people["rob"])

    assert outcome == "reversed"
    item.refresh_from_db()
    assert (item.status, item.overturned, item.reviewed_by) == ("accepted", True, people["rob"])
    assert item.queue_seq is not None and item.reason.startswith("reversed on appeal")
    hook.refresh_from_db()
    assert hook.overturned_count == 1
    statement.refresh_from_db()
    assert statement.ended_at is not None
    appeal.refresh_from_db()
    assert (appeal.status, appeal.note, appeal.decided_by) == ("reversed", "A recipe indeed.", people["rob"])
    assert Review.objects.get(content=item).decision == Review.Decision.REVERSE
    assert Recorder.events == [("on_reversed", str(item.pk))]


def test_an_upheld_appeal_keeps_the_verdict_and_cannot_be_decided_again(audit, people):
    item = rejected(audit, people["sam"])
    appeal = processing.appeal(item, "Wrong.", people["sam"])

    processing.decide_appeal(appeal.pk, "upheld", "Spam it is.", people["rob"])

    item.refresh_from_db()
    assert item.status == "rejected"
    assert HookConfig.objects.get(hook="keyword_blocklist").overturned_count == 0
    assert Review.objects.get(content=item).decision == Review.Decision.UPHOLD
    with pytest.raises(processing.AppealConflict, match="upheld already"):
        processing.decide_appeal(appeal.pk, "reversed", "", people["rita"])


def test_a_reversal_of_an_item_changed_since_is_refused(audit, people):
    item = rejected(audit, people["sam"])
    appeal = processing.appeal(item, "Wrong.", people["sam"])
    item.__class__.objects.filter(pk=item.pk).update(revision=item.revision + 1, status="pending")

    with pytest.raises(processing.AppealConflict, match="changed after the appeal"):
        processing.decide_appeal(appeal.pk, "reversed", "", people["rob"])
    assert processing.decide_appeal(appeal.pk, "upheld", "", people["rob"]) == "upheld"


def test_an_unknown_outcome_is_refused(audit, people):
    appeal = processing.appeal(rejected(audit, people["sam"]), "Wrong.", people["sam"])
    with pytest.raises(ValueError, match="one of upheld, reversed"):
        processing.decide_appeal(appeal.pk, "maybe", "", people["rob"])


def test_the_submitter_is_emailed_the_outcome_when_the_stash_has_an_email_sink(
    audit, people, django_capture_on_commit_callbacks, broker
):
    HookConfig.objects.create(stash=audit, hook="email", params={"to": ["ops@example.org"]}, position=9)
    appeal = processing.appeal(rejected(audit, people["sam"]), "Wrong.", people["sam"])
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        processing.decide_appeal(appeal.pk, "upheld", "Spam it is.", people["rob"])

    assert [message.to for message in mail.outbox] == [["sam@example.org"]]
    assert "was upheld" in mail.outbox[0].body and "Spam it is." in mail.outbox[0].body


def test_open_appeals_are_read_in_one_query_oldest_first(audit, people, django_assert_num_queries):
    first = processing.appeal(rejected(audit, people["sam"]), "One.", people["sam"])
    second = processing.appeal(rejected(audit, people["sam"], reviewer=people["rita"]), "Two.", people["sam"])
    processing.decide_appeal(
        processing.appeal(rejected(audit, people["sam"]), "Three.", people["sam"]).pk, "upheld", "", people["rob"]
    )

    with django_assert_num_queries(1):
        shown = [
            (a.pk, a.content.stash.slug, a.content.decided_by.title, a.statement.text[:4], a.original_reviewer)
            for a in processing.open_appeals(audit)
        ]

    assert [row[0] for row in shown] == [first.pk, second.pk]
    assert shown[1][4] == people["rita"]
    assert processing.open_appeal_count() == 2
