"""Every rejected or held item gets a statement of reasons from its stash's policy: when the worker
records the verdict, when a reviewer decides, when a review deadline passes; a lifted restriction
ends it; a preview builds them without saving."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from stash import processing
from stash.models import Content, Statement
from stash.processing import statements

from ..support.statements import judged, moderated_stash

pytestmark = pytest.mark.django_db


@pytest.fixture
def stash(make_stash, register_temporarily, broker):
    return moderated_stash(make_stash, register_temporarily, appeal_days=10)


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password="pw")


def test_a_hook_rejection_gets_its_codes_statement_with_the_matched_field(stash):
    item = judged(stash, text="buy spam now")
    statement = statements.current(item)
    assert item.status == "rejected"
    assert statement.text == "Your removed post used a word we do not allow in text."
    assert statement.kind == "hook" and statement.reason_code == "blocked_word"
    assert statement.facts == {
        "hook": "Words",
        "code": "blocked_word",
        "reason": "contains blocked word 'spam' in text",
        "field": "text",
    }
    assert (statement.automated_detection, statement.automated_decision) == (True, True)
    assert (statement.ground, statement.ground_reference, statement.ground_url) == (
        "terms",
        "Terms §4",
        "https://example.com/terms#4",
    )
    assert statement.category == "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH"
    assert statement.appeal_until == statement.decided_at + timedelta(days=10)
    assert statement.hook_config.label == "Words"


def test_a_hold_is_held_for_review_with_no_appeal_deadline(stash):
    item = judged(stash, text="see http://x")
    statement = statements.current(item)
    assert (statement.restriction, statement.ground, statement.appeal_until) == ("held", "illegal", None)
    assert statement.text == "Links wait for a person: has a link."


def test_a_code_without_an_entry_falls_back_to_the_default_and_the_built_in_text(make_stash, broker):
    stash = make_stash("plain", hooks=[("regex", {"field": "n", "pattern": "^a"})], statement_policy={})
    statement = statements.current(judged(stash, n="b"))
    assert statement.text == "Your content was removed because n does not match ^a."
    assert statement.category == "STATEMENT_CATEGORY_OTHER_VIOLATION_TC"
    assert statement.facts["field"] == "n"


def test_accepted_items_get_no_statement(stash):
    item = judged(stash, text="fine")
    assert item.status == "accepted"
    assert statements.current(item) is None
    assert not Statement.objects.exists()


def test_recording_a_batch_writes_all_its_statements_in_one_query(stash):
    items = [Content.objects.create(stash=stash, payload={"text": f"spam {n}"}) for n in range(5)]
    items = list(Content.objects.select_related("stash").filter(pk__in=[i.pk for i in items]))
    for item in items:
        item.status = "rejected"
    decisions = {item.pk: {"code": "blocked_word", "hook": "keyword_blocklist", "message": "m"} for item in items}
    with CaptureQueriesContext(connection) as queries:
        written = statements.record(items, Statement.Kind.HOOK, decisions=decisions)
    assert len(written) == 5
    assert len(queries) == 1


def test_a_reviewer_rejecting_a_held_item_makes_a_new_statement_not_automated(stash, alice):
    item = judged(stash, text="see http://x")
    processing.reject(Content.objects.filter(pk=item.pk), alice, "a scam")
    item.refresh_from_db()
    hold, rejection = Statement.objects.filter(content=item).order_by("decided_at", "pk")
    assert hold.ended_at is not None
    assert statements.current(item) == rejection
    assert (rejection.kind, rejection.reviewer, rejection.restriction) == ("reviewer", alice, "removed")
    assert (rejection.automated_detection, rejection.automated_decision) == (True, False)
    assert "note" not in rejection.facts  # a review note stays inside
    assert rejection.appeal_until is not None


def test_approving_a_held_item_ends_its_statement(stash, alice):
    item = judged(stash, text="see http://x")
    processing.approve(Content.objects.filter(pk=item.pk), alice)
    statement = Statement.objects.get(content=item)
    assert statement.ended_at is not None
    item.refresh_from_db()
    assert statements.current(item) is None


def test_an_overturn_to_rejected_is_a_reviewers_decision_with_no_hook(stash, alice):
    item = judged(stash, text="fine")
    processing.overturn(Content.objects.filter(pk=item.pk), alice, "off topic")
    statement = statements.current(Content.objects.get(pk=item.pk))
    assert (statement.reason_code, statement.automated_detection, statement.automated_decision) == (
        "reviewed",
        False,
        False,
    )
    assert statement.facts["reason"] == "a moderator decided it breaks the rules"


def test_an_expiry_statement_is_automated(stash):
    item = judged(stash, text="see http://x")
    Content.objects.filter(pk=item.pk).update(status="rejected")
    item = Content.objects.select_related("stash").get(pk=item.pk)
    (statement,) = statements.record([item], Statement.Kind.EXPIRY)
    assert (statement.kind, statement.reason_code, statement.automated_decision) == ("expiry", "link", True)
    assert statement.restriction == "removed"
    hold = Statement.objects.get(content=item, kind="hook")
    assert hold.ended_at == statement.decided_at  # the decision it replaces ends with it


def test_a_preview_builds_statements_under_the_edited_policy_and_saves_nothing(stash):
    item = judged(stash, text="see http://x")
    before = Statement.objects.count()
    policy = {"codes": {"link": {"text": "Preview: {hook} held it ({field})."}}}
    (built,) = statements.preview(stash, policy, [item])
    assert built.pk is None and built.text == "Preview: Links held it (text)."
    assert Statement.objects.count() == before
    assert "link" in statements.known_codes(stash)


def test_an_unknown_export_format_is_refused(stash):
    with pytest.raises(ValueError, match="unknown format 'xml': dsa or jsonl"):
        list(statements.export_rows(fmt="xml"))


def test_saving_an_invalid_policy_raises_and_saves_nothing(stash):
    before, version = stash.statement_policy, stash.config_version
    with pytest.raises(ValidationError, match="not a category of the DSA database"):
        statements.save_policy(stash, {"default": {"category": "STATEMENT_CATEGORY_SCOPE_OF_PLATFORM_SERVICE"}})
    stash.refresh_from_db()
    assert (stash.statement_policy, stash.config_version) == (before, version)
