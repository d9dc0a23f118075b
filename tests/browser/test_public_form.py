"""In Chromium: the submit form generated from a stash's payload schema, and the status page that
swaps in the verdict and the payload as stored (after a transform) without a reload."""

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from stash import processing
from stash.models import Content

pytestmark = pytest.mark.django_db(transaction=True)

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "title": "Title", "description": "What it is about.", "maxLength": 60},
        "score": {"type": "number", "title": "Score", "minimum": 0, "maximum": 1},
        "urgent": {"type": "boolean", "title": "Urgent"},
        "channel": {"enum": ["web", "phone"], "title": "Channel"},
        "tags": {"type": "array", "title": "Tags", "items": {"type": "string"}},
    },
    "required": ["title", "channel"],
}


@pytest.fixture
def shop(make_stash, broker):
    return make_stash(
        "shop",
        name="Shop",
        allow_anonymous=True,
        hooks=[
            {"hook": "json_schema", "label": "Shape", "params": {"schema": SCHEMA}},
            {"hook": "normalize_text", "label": "Tidy", "params": {"fields": ["title"], "lowercase": True}},
        ],
    )


def test_the_form_asks_field_by_field_shows_errors_on_the_fields_and_saves_the_object(page, live_server, shop):
    page.goto(f"{live_server.url}/s/shop/submit/")
    expect(page.get_by_label("Data")).to_have_count(0)  # no raw JSON for a stash with a schema
    page.get_by_label("Score").fill("3")
    page.get_by_role("button", name="Submit").click()

    expect(page.locator(".field.invalid")).to_have_count(3)  # title and channel missing, score too high
    title = page.locator(".field", has=page.get_by_label("Title"))
    expect(title.locator(".errors")).to_have_text("This field is required.")
    expect(title.locator(".required")).to_have_text("(required)")
    expect(page.locator(".field", has=page.get_by_label("Score")).locator(".errors")).to_have_text(
        "Ensure this value is less than or equal to 1."
    )
    assert not Content.objects.exists()
    violations = [v["id"] for v in Axe().run(page).response["violations"] if v["impact"] in {"critical", "serious"}]
    assert violations == []

    page.get_by_label("Title").fill("A lamp")
    page.get_by_label("Score").fill("0.25")
    page.get_by_label("Urgent").check()
    page.get_by_label("Channel").select_option("phone")
    page.get_by_label("Tags").fill("desk\nlight")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url(f"{live_server.url}/c/*/")
    assert Content.objects.get().payload == {
        "title": "A lamp",
        "score": 0.25,
        "urgent": True,
        "channel": "phone",
        "tags": ["desk", "light"],
    }


def test_the_status_page_shows_the_payload_as_stored_once_the_verdict_comes(page, live_server, shop):
    page.goto(f"{live_server.url}/s/shop/submit/")
    page.get_by_label("Title").fill("  A   BIG Lamp ")
    page.get_by_label("Channel").select_option("web")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url(f"{live_server.url}/c/*/")
    expect(page.locator("#verdict .status")).to_have_text("Waiting for the hooks to judge it…")
    title = page.locator('#payload dt:text-is("title") + dd')
    expect(title).to_have_text("A BIG Lamp")  # as typed (the ends stripped by the form)
    page.evaluate("window.stillTheSamePage = true")

    processing.judge([Content.objects.get().pk])  # a transform lowercases and tidies the title

    expect(page.locator("#verdict .status")).to_have_text("Accepted", timeout=30_000)
    expect(page.locator("#verdict ol.trail li")).to_have_text(["Shape kept it.", "Tidy changed it: changed title."])
    expect(title).to_have_text("a big lamp")
    assert page.evaluate("window.stillTheSamePage") is True


def serious_violations(page):
    violations = Axe().run(page).response["violations"]
    return [
        (v["id"], [n["target"] for n in v["nodes"]][:3], v["nodes"][0].get("failureSummary"))
        for v in violations
        if v["impact"] in {"critical", "serious"}
    ]


def test_the_api_docs_page_has_a_language_one_main_landmark_and_no_serious_violation(page, live_server):
    page.goto(f"{live_server.url}/api/docs/")
    expect(page.locator("main .opblock").first).to_be_visible()  # the operations, once the schema is read
    violations = Axe().run(page).response["violations"]
    assert {v["id"] for v in violations} & {"html-has-lang", "landmark-one-main", "region"} == set()
    assert page.locator("html").get_attribute("lang") == "en"
    assert serious_violations(page) == []

    # An operation opened, its parameters (an enum's list among them) and responses shown, and tried out.
    page.locator("#operations-appeals-appeals_list .opblock-summary-control").click()
    expect(page.locator("#operations-appeals-appeals_list tr[data-param-name='status'] select")).to_be_attached()
    assert serious_violations(page) == []
    page.locator("#operations-appeals-appeals_list .try-out__btn").click()
    expect(page.locator("#operations-appeals-appeals_list .execute")).to_be_visible()
    assert serious_violations(page) == []

    # An operation with a request body, and the schemas at the foot of the page.
    page.locator("#operations-contents-contents_create .opblock-summary-control").click()
    expect(page.locator("#operations-contents-contents_create .opblock-section-request-body")).to_be_visible()
    page.locator("section.models .model-container .model-box-control").first.click()
    expect(page.locator("section.models .model-container .model .property-row").first).to_be_visible()
    assert serious_violations(page) == []
