"""Replay of hooks not saved, in real Chromium: a draft from the stash page, a pipeline file, and the
upload preview's diff with its "Replay this file" button."""

import json

import pytest
from playwright.sync_api import expect

from stash import processing
from stash.models import PipelineRun

from . import test_simulate
from .test_simulate import NOTIFY, hooks_as_saved, judge, type_raw_params

pytestmark = pytest.mark.django_db(transaction=True)

audit = test_simulate.audit  # the same stash: four hooks, No spam the second


def recorded(stash):
    """What a replay must leave alone: the hooks as saved, the items' verdicts, the runs."""
    return hooks_as_saved(), sorted(stash.contents.values_list("status", flat=True)), PipelineRun.objects.count()


@pytest.fixture
def items(audit):
    return [judge(audit, {"text": text}) for text in ("spam offer", "a scam offer", "fine")]


def scam_file(stash, tmp_path):
    """The stash's export with No spam blocking "scam" instead, as a file."""
    document = processing.export_document(stash)
    document["hooks"][1]["params"] = {"words": ["scam"], "whole_word": True}
    path = tmp_path / "scam-pipeline.json"
    path.write_text(json.dumps(document))
    return path


def changed_rows(page):
    return page.locator("#replay table.stash-replay tbody tr")


def test_a_draft_of_the_hooks_is_replayed_from_the_stash_page_and_saves_nothing(logged_in, live_server, audit, items):
    page = logged_in
    before = recorded(audit)
    page.set_viewport_size({"width": 1500, "height": 1000})
    page.goto(f"{live_server.url}/admin/stash/stash/{audit.pk}/change/")
    type_raw_params(page, 1, '{"words": ["scam"], "whole_word": true}')
    page.uncheck("#id_hooks-2-enabled")  # the transform, off in the draft
    with page.context.expect_page() as opened:
        page.click("input[name=_draft][value='Replay these hooks (unsaved)']")
    replay = opened.value
    replay.wait_for_load_state()
    expect(replay.locator("#draft h2")).to_have_text("Draft hooks (not saved)")
    expect(replay.locator("#replay h2")).to_have_text(
        "Of the latest 3 items, the draft hooks would newly reject 1, would newly accept 1, would newly hold 0."
    )
    expect(replay.locator("#enabled-hooks")).to_have_text(
        "3 enabled hooks run, in this order: 1. Needs text · 2. No spam · 3. At most 64 KB"
    )
    expect(changed_rows(replay)).to_have_count(2)
    expect(replay.locator("#judge-again")).to_have_count(0)
    # The draft stays on the page for the next replay.
    replay.fill("#id_last_n", "1")
    replay.click(".submit-row input[type=submit]")
    expect(replay.locator("#replay h2")).to_contain_text("Of the latest item, the draft hooks")
    assert recorded(audit) == before


def test_a_pipeline_file_is_replayed_and_kept_for_the_next_replay(logged_in, live_server, audit, items, tmp_path):
    page = logged_in
    before = recorded(audit)
    page.goto(f"{live_server.url}/admin/stash/stash/{audit.pk}/replay/")
    page.set_input_files("#id_file", str(scam_file(audit, tmp_path)))
    page.click(".submit-row input[type=submit]")
    expect(page.locator("#replayed-file h2")).to_have_text("Hooks of scam-pipeline.json (not saved)")
    expect(page.locator("#replay h2")).to_contain_text(
        "Of the latest 3 items, the hooks of scam-pipeline.json would newly reject 1, would newly accept 1"
    )
    expect(changed_rows(page)).to_have_count(2)
    page.fill("#id_last_n", "2")
    page.click(".submit-row input[type=submit]")  # the file is not chosen again: the page keeps it
    expect(page.locator("#replay h2")).to_contain_text("Of the latest 2 items, the hooks of scam-pipeline.json")
    page.click("text=Replay the current hooks instead")
    page.click(".submit-row input[type=submit]")
    expect(page.locator("#replay h2")).to_contain_text("Of the latest 3 items, the current hooks would newly reject 0")
    assert recorded(audit) == before


def test_the_upload_preview_names_the_file_shows_the_diff_and_replays_it(
    logged_in, live_server, audit, items, tmp_path
):
    page = logged_in
    before = recorded(audit)
    page.goto(f"{live_server.url}/admin/stash/stash/{audit.pk}/pipeline/upload/")
    page.set_input_files("#id_file", str(scam_file(audit, tmp_path)))
    page.click("#upload input[type=submit]")
    expect(page.locator("#preview h2").first).to_have_text("What scam-pipeline.json would change")
    expect(page.locator("#changes")).to_have_text('No spam: words ["spam"] → ["scam"]')
    expect(page.locator("#diff .stash-diff-file")).to_have_text(
        [f"--- version {audit.config_version}", "+++ scam-pipeline.json"]
    )
    expect(page.locator("#diff .stash-diff-removed")).to_have_text(['removed: -          "spam"'])
    expect(page.locator("#diff .stash-diff-added")).to_have_text(['added: +          "scam"'])
    with page.context.expect_page() as opened:
        page.click("#replay-file input[type=submit]")
    replay = opened.value
    replay.wait_for_load_state()
    expect(replay.locator("#replay h2")).to_contain_text("the hooks of scam-pipeline.json would newly reject 1")
    assert recorded(audit) == before


def test_a_pipeline_files_hooks_are_listed_numbered_without_gaps_and_its_sinks_apart(
    logged_in, live_server, make_stash, broker, tmp_path
):
    page = logged_in
    stash = make_stash(
        "notified",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "webhook", "label": "Notify", "params": NOTIFY},
            {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}},
            {"hook": "max_size", "label": "At most 64 KB", "params": {"max_bytes": 65536}},
        ],
    )
    judge(stash, {"text": "spam"})
    document = processing.export_document(stash)
    document["hooks"][2]["enabled"] = False  # No spam, off in the file
    document["hooks"][3]["mode"] = "observe"
    path = tmp_path / "quiet-pipeline.json"
    path.write_text(json.dumps(document))
    page.goto(f"{live_server.url}/admin/stash/stash/{stash.pk}/replay/")
    expect(page.locator("#enabled-hooks")).to_have_text(
        "3 enabled hooks run, in this order: 1. Needs text · 2. No spam · 3. At most 64 KB; "
        "then, on the verdict: Notify"
    )
    page.set_input_files("#id_file", str(path))
    page.click(".submit-row input[type=submit]")
    expect(page.locator("#replay h2")).to_contain_text(
        "the hooks of quiet-pipeline.json would newly reject 0, would newly accept 1"
    )
    expect(page.locator("#enabled-hooks")).to_have_text(
        "2 enabled hooks run, in this order: 1. Needs text · 2. At most 64 KB (observing); then, on the verdict: Notify"
    )
