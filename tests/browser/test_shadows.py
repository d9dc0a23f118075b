"""A shadow in real Chromium: started from the stash's Shadows page with an edited pipeline file, its
agreement report with the disagreeing items' trails side by side, then promoted as one version."""

import json

import pytest
from playwright.sync_api import expect

from stash import processing
from stash.models import Content, PipelineVersion

from ..support.shadows import run_shadow_messages
from .test_admin import SCREENSHOTS

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def shop(make_stash):
    return make_stash(
        "shop",
        name="Shop",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}},
        ],
    )


def test_an_operator_shadows_a_stricter_pipeline_reads_the_report_and_promotes_it(logged_in, live_server, shop, broker):
    page = logged_in
    document = processing.export_document(shop)
    document["hooks"][1]["params"]["words"] = ["spam", "eggs"]  # the change to try on live traffic
    page.goto(f"{live_server.url}/admin/stash/stash/{shop.pk}/change/")
    page.click("#pipeline-tools >> text=Shadows")
    page.set_input_files(
        "#id_document",
        files=[{"name": "stricter.json", "mimeType": "application/json", "buffer": json.dumps(document).encode()}],
    )
    page.fill("#id_percent", "100")
    page.fill("#id_count", "4")
    page.click("#start-shadow input[type=submit]")
    expect(page.locator(".messagelist")).to_contain_text("started.")

    items = [
        Content.objects.create(stash=shop, payload={"text": text}) for text in ("ham", "eggs", "spam", "green eggs")
    ]
    processing.judge([item.pk for item in items])
    run_shadow_messages(broker)  # the live worker judged them; on Redis, one message writes the runs
    assert [Content.objects.get(pk=i.pk).status for i in items] == ["accepted", "accepted", "rejected", "accepted"]

    page.reload()
    expect(page.locator("#agreement-counts")).to_contain_text("4 items: 2 agreed, 2 disagreed.")
    expect(page.locator("#matrix")).to_contain_text("accepted/rejected")
    expect(page.locator("#disagreements .stash-side-by-side")).to_have_count(2)
    expect(page.locator("#shadow-facts")).to_contain_text("finished")
    page.screenshot(path=SCREENSHOTS / "shadow.png", full_page=True)

    before = PipelineVersion.objects.filter(stash=shop).count()
    page.click("#shadow-actions input.default")
    expect(page.locator(".messagelist")).to_contain_text("version")
    assert PipelineVersion.objects.filter(stash=shop).count() == before + 1
    shop.refresh_from_db()
    assert shop.hooks.get(label="No spam").params == {"words": ["spam", "eggs"]}
