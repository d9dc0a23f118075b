"""Golden examples guarding the stash page and the hooks list in real Chromium, and the pipeline pages
at 1280 px."""

import json

import pytest
from playwright.sync_api import expect

from stash.models import Example, HookConfig, Stash

from .test_admin import SCREENSHOTS, drag

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def audit(make_stash):
    stash = make_stash(
        "audit",
        name="Audit",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "max_size", "label": "At most 64 KB", "params": {"max_bytes": 65536}},
        ],
    )
    Example.objects.create(stash=stash, name="plain text", payload={"text": "hello there"}, verdict="accepted")
    return stash


def size_limit():
    return HookConfig.objects.get(label="At most 64 KB").params


def test_an_edit_that_breaks_an_example_is_refused_then_saved_with_a_warning_once_the_stash_warns(
    logged_in, live_server, audit
):
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/stash/{audit.pk}/change/")
    expect(page.locator("#id_examples_policy")).to_have_value("block")
    size = page.locator("#hooks-group tr.has_original").nth(1)
    size.locator(".stash-params-fold summary").click()
    size.locator(".stash-params-form input[type=number]").fill("10")
    page.click("input[name=_save]")

    expect(page.locator(".errornote")).to_be_visible()
    top = page.locator("ul.errorlist.nonfield")
    expect(top).to_contain_text("Not saved: this change breaks golden examples of audit, which refuses such changes.")
    expect(top).to_contain_text("Example “plain text”: expected accepted, got rejected")
    expect(page.locator("#hooks-group")).to_contain_text("These hooks break golden examples: see the list at the top")
    assert size_limit() == {"max_bytes": 65536}
    assert Stash.objects.get(pk=audit.pk).config_version == audit.config_version

    # The page keeps the edit: the stash now warns instead, and the same save goes through.
    page.select_option("#id_examples_policy", "warn")
    page.click("input[name=_save]")
    warning = page.locator(".messagelist .warning")
    expect(warning).to_contain_text(
        "Saved, but this change breaks a golden example: Example “plain text”: expected accepted, got rejected"
    )
    assert size_limit() == {"max_bytes": 10}
    assert Stash.objects.get(pk=audit.pk).examples_policy == "warn"


def test_a_drag_in_the_hooks_list_that_breaks_an_example_is_undone_and_says_why(logged_in, live_server, make_stash):
    page = logged_in
    stash = make_stash(
        "sized",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "max_size", "label": "At most 10 B", "params": {"max_bytes": 10}},
        ],
    )
    Example.objects.create(
        stash=stash, name="no text", payload={"note": "a long note, and no text"}, verdict="rejected", hook="Needs text"
    )
    page.goto(f"{live_server.url}/admin/stash/hookconfig/?stash__id__exact={stash.pk}")
    handles = page.locator("#result_list div.drag.handle")
    expect(handles).to_have_count(2)
    drag(page, handles.nth(1), handles.nth(0))

    # Refused: the list is loaded again, in the order that holds, with the reason on top.
    error = page.locator(".messagelist .error")
    expect(error).to_contain_text(
        "Nothing was changed. It breaks golden examples of sized, which refuses such changes."
    )
    expect(error).to_contain_text("Example “no text”: expected 'Needs text' to decide, got 'At most 10 B'")
    expect(page.locator("#result_list tbody .field-title")).to_have_text(["Needs text", "At most 10 B"])
    assert list(stash.hooks.in_order().values_list("label", flat=True)) == ["Needs text", "At most 10 B"]


def test_run_examples_and_the_versions_pages_fit_a_1280_px_window(logged_in, live_server, audit):
    page = logged_in
    HookConfig.objects.filter(label="At most 64 KB").update(params={"max_bytes": 10})
    page.goto(f"{live_server.url}/admin/stash/stash/{audit.pk}/change/")
    page.click("#pipeline-tools >> text=1 golden example")
    page.click("input[name=_run]")
    result = page.locator("#examples-run")
    expect(result.locator("h2")).to_have_text("1 of 1 examples failed")
    expect(result.locator("tr.stash-example-failed")).to_contain_text("expected accepted, got rejected")
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0

    page.goto(f"{live_server.url}/admin/stash/stash/{audit.pk}/versions/")
    page.click("input[type=submit]")  # the two newest versions, picked already
    expect(page.locator("#changes")).to_have_text("At most 64 KB: max_bytes 65536 → 10")
    removed, added = page.locator("#diff .stash-diff-removed"), page.locator("#diff .stash-diff-added")
    expect(removed).to_have_text(['removed: -        "max_bytes": 65536'])
    expect(added).to_have_text(['added: +        "max_bytes": 10'])
    # The words are for screen readers; the eye sees the + and - and the colours.
    expect(added.locator(".visually-hidden")).to_have_css("position", "absolute")
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    page.screenshot(path=SCREENSHOTS / "versions-diff.png", full_page=True)


def test_downloading_and_uploading_a_pipeline(logged_in, live_server, audit, tmp_path):
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/stash/{audit.pk}/change/")
    with page.expect_download() as download:
        page.click("#pipeline-tools >> text=Download pipeline")
    assert download.value.suggested_filename == "audit-pipeline.json"
    document = json.loads(open(download.value.path()).read())
    document["hooks"][1]["params"] = {"max_bytes": 1000}
    edited = tmp_path / "audit-pipeline.json"
    edited.write_text(json.dumps(document))

    page.click("#pipeline-tools >> text=Upload pipeline")
    page.set_input_files("#id_file", str(edited))
    page.click("#upload input[type=submit]")
    expect(page.locator("#changes")).to_have_text("At most 64 KB: max_bytes 65536 → 1000")
    expect(page.locator("#example-results")).to_contain_text("passed")
    assert size_limit() == {"max_bytes": 65536}
    page.click("input[name=_apply]")
    expect(page.locator(".messagelist .success")).to_contain_text("Pipeline uploaded: it is pipeline version")
    assert size_limit() == {"max_bytes": 1000}
