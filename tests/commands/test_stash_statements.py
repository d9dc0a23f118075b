"""``stash_statements --format dsa`` writes one DSA Transparency Database statement a line, valid
against stash/core/dsa_statement.schema.json for every kind of decision; ``jsonl`` stash's own
fields; bad arguments are a CommandError."""

import io
import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from stash import processing
from stash.core import dsa
from stash.models import Content, Statement

from ..support.statements import judged, moderated_stash

pytestmark = pytest.mark.django_db


@pytest.fixture
def stash(make_stash, register_temporarily, broker):
    return moderated_stash(make_stash, register_temporarily)


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password="pw")


def export(*args):
    out = io.StringIO()
    call_command("stash_statements", *args, stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def only_valid_line(*args):
    (line,) = export("--format", "dsa", *args)
    assert dsa.errors(line) == []
    return line


def test_a_hook_rejection_exports_as_a_valid_automated_removal(stash):
    item = judged(stash, text="spam")
    line = only_valid_line()
    assert line["decision_visibility"] == ["DECISION_VISIBILITY_CONTENT_REMOVED"]
    assert line["decision_ground"] == "DECISION_GROUND_INCOMPATIBLE_CONTENT"
    assert line["incompatible_content_ground"] == "Terms §4"
    assert line["decision_ground_reference_url"] == "https://example.com/terms#4"
    assert line["category"] == "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH"
    assert (line["automated_detection"], line["automated_decision"]) == ("Yes", "AUTOMATED_DECISION_FULLY")
    assert line["source_type"] == "SOURCE_VOLUNTARY"
    assert line["puid"].startswith(f"{item.pk}/")
    assert "field: text" in line["decision_facts"]


def test_a_hold_exports_as_another_visibility_restriction_on_an_illegal_ground(stash):
    judged(stash, text="http://x")
    line = only_valid_line()
    assert line["decision_visibility"] == ["DECISION_VISIBILITY_OTHER"]
    assert line["decision_visibility_other"] == dsa.HELD_VISIBILITY
    assert line["decision_ground"] == "DECISION_GROUND_ILLEGAL_CONTENT"
    assert line["illegal_content_legal_ground"] == "Fraud Act s.2"


def test_a_reviewer_rejection_exports_as_not_automated(stash, alice):
    item = judged(stash, text="http://x")
    processing.reject(Content.objects.filter(pk=item.pk), alice)
    hold, rejection = export("--format", "dsa")
    assert [dsa.errors(hold), dsa.errors(rejection)] == [[], []]
    assert rejection["automated_decision"] == "AUTOMATED_DECISION_NOT_AUTOMATED"
    assert rejection["automated_detection"] == "Yes"
    assert "end_date_visibility_restriction" in hold


def test_an_automatic_expiry_exports_as_fully_automated(stash):
    item = judged(stash, text="http://x")  # held
    stash.review_expire_hours, stash.review_expire_action = 1, "reject"
    stash.save()
    Content.objects.filter(pk=item.pk).update(processed_at=timezone.now() - timedelta(hours=2))

    assert processing.expire_reviews().total == 1

    hold, expiry = export("--format", "dsa")
    assert [dsa.errors(hold), dsa.errors(expiry)] == [[], []]
    assert expiry["decision_visibility"] == ["DECISION_VISIBILITY_CONTENT_REMOVED"]
    assert expiry["automated_decision"] == "AUTOMATED_DECISION_FULLY"
    assert "review deadline" in expiry["decision_facts"]
    assert "end_date_visibility_restriction" in hold  # the hold ended when it was decided


def test_a_reversal_on_appeal_exports_the_end_date_of_the_visibility_restriction(stash, django_user_model):
    item = judged(stash, text="spam")
    appeal = processing.appeal(item, "It was a quote.", None)
    rob = django_user_model.objects.create_superuser("rob")

    processing.decide_appeal(appeal.pk, "reversed", "We agree.", rob)

    line = only_valid_line()
    statement = Statement.objects.get(content=item)
    assert statement.ended_at is not None
    assert line["end_date_visibility_restriction"] == statement.ended_at.strftime("%Y-%m-%d")
    assert Content.objects.get(pk=item.pk).status == "accepted"


def test_jsonl_gives_stashs_own_fields_filtered_by_stash_and_date(stash, make_stash, register_temporarily):
    judged(stash, text="spam")
    other = make_stash("other", hooks=[("regex", {"field": "n", "pattern": "^a"})])
    judged(other, n="b")
    (row,) = export("--stash", "moderated")
    assert (row["reason_code"], row["restriction"], row["kind"]) == ("blocked_word", "removed", "hook")
    assert len(export()) == 2
    assert export("--since", "2999-01-01") == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "xml"], "--format must be dsa or jsonl"),
        (["--stash", "nope"], "No stash with slug 'nope'"),
        (["--since", "yesterday"], "--since must be a date"),
        (["--since", "2024-13-45"], "--since must be a date"),
    ],
)
def test_bad_arguments_are_a_command_error(db, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("stash_statements", *args, stdout=io.StringIO())


def test_the_schema_refuses_what_the_database_would():
    line = {"decision_ground": "DECISION_GROUND_ILLEGAL_CONTENT", "decision_visibility": ["DECISION_VISIBILITY_OTHER"]}
    problems = " ".join(dsa.errors(line))
    assert "puid: This field is required." in problems
    assert "illegal_content_legal_ground: This field is required." in problems
    assert "decision_visibility_other: This field is required." in problems


def test_an_upheld_appeal_exports_a_statement_decided_by_a_person(stash, django_user_model):
    item = judged(stash, text="spam")
    appeal = processing.appeal(item, "It was a quote.", None)

    processing.decide_appeal(
        appeal.pk, "upheld", "Quoting it still spreads it.", django_user_model.objects.create_superuser("rob")
    )

    hook, upheld = export("--format", "dsa")
    assert [dsa.errors(hook), dsa.errors(upheld)] == [[], []]
    assert upheld["automated_decision"] == "AUTOMATED_DECISION_NOT_AUTOMATED"
    assert upheld["decision_visibility"] == ["DECISION_VISIBILITY_CONTENT_REMOVED"]
    current = processing.statements.current(Content.objects.get(pk=item.pk))
    assert current.kind == "appeal" and current.appeal_until is None
    assert current.facts["note"] == "Quoting it still spreads it."
