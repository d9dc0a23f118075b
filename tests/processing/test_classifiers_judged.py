"""The classifier hooks configured in a stash and judged by the one Django-side path (processing.judge)."""

import pytest

from stash import processing
from stash.models import Content

pytestmark = pytest.mark.django_db


def judged(stash, **payload):
    item = Content.objects.create(stash=stash, payload=payload)
    processing.judge([item.pk])
    return Content.objects.get(pk=item.pk)


def test_a_stash_records_the_language_holds_profanity_and_rejects_other_languages(make_stash):
    stash = make_stash(
        "forum",
        hooks=[
            {"hook": "language", "params": {"write_to": "meta.language"}, "position": 1},
            {"hook": "language", "params": {"allowed": ["en", "de"], "fields": ["text"]}, "position": 2},
            {"hook": "profanity", "params": {"action": "hold", "fields": ["text"]}, "position": 3},
        ],
    )

    fine = judged(stash, text="Mein Bruder hat letzte Woche ein neues Fahrrad gekauft.")
    french = judged(stash, text="Il faisait très beau ce week-end, alors nous avons marché le long de la rivière.")
    rude = judged(stash, text="shut the fuck up and fix this")

    assert fine.status == Content.Status.ACCEPTED
    assert fine.payload["meta"]["language"]["language"] == "de"
    assert (french.status, french.decided_by.hook) == (Content.Status.REJECTED, "language")
    assert french.reason.startswith("language of text is fr (confidence ")
    assert (rude.status, rude.decided_by.hook) == (Content.Status.HELD, "profanity")
    assert "offensive language in text (probability " in rude.reason
    trail = rude.runs.get().trail
    assert [entry["outcome"] for entry in trail] == ["transformed", "kept", "held"]
    assert trail[2]["field"] == "text"
