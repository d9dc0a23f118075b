"""The DSA Transparency Database's statement of a statement of reasons: its fields, enum keys and
limits, checked against stash/core/dsa_statement.schema.json, without a database."""

from datetime import UTC, datetime

import pytest

from stash.core import dsa, statements


def row(**changes):
    return {
        "id": 3,
        "content_id": "0b4c",
        "kind": "hook",
        "restriction": "removed",
        "text": "Removed.",
        "facts": {"hook": "Words", "reason": "contains 'x'", "field": "text", "code": "blocked_word"},
        "ground": "terms",
        "ground_reference": "",
        "ground_url": "",
        "category": "STATEMENT_CATEGORY_OTHER_VIOLATION_TC",
        "automated_detection": True,
        "automated_decision": True,
        "decided_at": datetime(2026, 3, 1, 12, tzinfo=UTC),
        "ended_at": None,
        "content_created_at": datetime(2026, 2, 28, 9, tzinfo=UTC),
        **changes,
    }


@pytest.mark.parametrize("restriction", statements.RESTRICTIONS)
@pytest.mark.parametrize("ground", statements.GROUNDS)
@pytest.mark.parametrize("category", statements.CATEGORIES)
def test_every_restriction_ground_and_category_makes_a_valid_statement(restriction, ground, category):
    assert dsa.errors(dsa.to_dsa(row(restriction=restriction, ground=ground, category=category))) == []


def test_a_blank_reference_and_long_texts_are_made_to_fit():
    line = dsa.to_dsa(row(text="x" * 3000, facts={"reason": "y" * 6000}))
    assert line["incompatible_content_ground"] == "Terms of service"
    assert len(line["incompatible_content_explanation"]) == dsa.EXPLANATION_MAX
    assert len(line["decision_facts"]) == dsa.FACTS_MAX
    assert dsa.errors(line) == []


def test_dates_are_days_and_an_end_is_the_visibility_restrictions():
    line = dsa.to_dsa(row(ended_at=datetime(2026, 3, 2, 8, tzinfo=UTC)))
    assert (line["content_date"], line["application_date"], line["end_date_visibility_restriction"]) == (
        "2026-02-28",
        "2026-03-01",
        "2026-03-02",
    )


def test_an_unknown_category_is_refused_by_the_schema():
    assert "category" in dsa.errors(dsa.to_dsa(row(category="STATEMENT_CATEGORY_SCOPE_OF_PLATFORM_SERVICE")))[0]


def test_a_statement_s_faults_are_said_in_words_on_their_field():
    line = dsa.to_dsa(row(ground="illegal"))
    line.update(content_date="1 March", puid="x" * 600, incompatible_content_ground="Terms")
    del line["decision_facts"]

    assert dsa.errors(line) == [
        "decision_facts: This field is required.",
        "incompatible_content_ground: This field is not allowed here.",
        "content_date: Enter a value in the expected format: A date as YYYY-MM-DD.",
        "puid: Must be at most 500 characters.",
    ]
