"""Replay of hooks that are not saved: a draft's configs, or a pipeline document; nothing is written."""

import pytest

from stash import processing
from stash.models import Content, HookConfig, PipelineRun, PipelineVersion

pytestmark = pytest.mark.django_db

HOOKS = [("require_fields", {"fields": ["text"]}), ("keyword_blocklist", {"words": ["spam"]})]


def judged(stash, text):
    item = Content.objects.create(stash=stash, payload={"text": text})
    processing.judge([item.pk])
    return item


def written():
    return PipelineRun.objects.count(), PipelineVersion.objects.count(), list(HookConfig.objects.values_list("params"))


def test_a_document_and_a_draft_replay_their_own_hooks_against_the_recorded_verdicts(make_stash):
    stash = make_stash("audit", hooks=HOOKS)
    spam, scam = judged(stash, "spam"), judged(stash, "a scam")
    before = written()
    document = processing.export_document(stash)
    document["hooks"][1]["params"] = {"words": ["scam"]}
    draft = list(stash.hooks.in_order())
    draft[1].params = {"words": ["scam"]}  # edited, not saved

    for report in (processing.replay(stash, 10, document=document), processing.replay(stash, 10, hooks=draft)):
        assert {c.content.pk: (c.before, c.result.verdict) for c in report.changes} == {
            spam.pk: ("rejected", "accepted"),
            scam.pk: ("accepted", "rejected"),
        }
        assert [step.title for step in report.steps] == ["require_fields", "keyword_blocklist"]
    assert written() == before


def test_a_bad_document_names_its_faults_and_replays_nothing(make_stash):
    stash = make_stash("audit", hooks=HOOKS)
    judged(stash, "spam")
    before = written()
    with pytest.raises(processing.InvalidDocument, match="no_such_hook"):
        processing.replay(
            stash, 10, document={"format": "stash.pipeline", "format_version": 1, "hooks": [{"hook": "no_such_hook"}]}
        )
    assert written() == before
