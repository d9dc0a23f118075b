"""Appeals in real Chromium: a submitter appeals from the item's page, a second reviewer reverses it
in the admin, the submitter sees the outcome; axe-core finds no critical or serious violation on
the item's page with the form nor on the admin's appeals page."""

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth.models import Permission
from playwright.sync_api import expect

from stash.models import Appeal
from tests.support.appeals import rejected

from .test_admin import SCREENSHOTS

pytestmark = pytest.mark.django_db(transaction=True)

FAILING_IMPACTS = {"critical", "serious"}


@pytest.fixture
def sam(django_user_model):
    user = django_user_model.objects.create_user("sam", password="sam-pass-123")
    user.user_permissions.add(Permission.objects.get(content_type__app_label="stash", codename="add_content"))
    return user


@pytest.fixture
def item(make_stash, sam, admin_user):
    stash = make_stash("audit", name="Audit", hooks=[{"hook": "keyword_blocklist", "params": {"words": ["spam"]}}])
    # Rejected by a reviewer other than the admin who decides the appeal.
    rita = type(admin_user).objects.create_user("rita")
    return rejected(stash, sam, reviewer=rita, text="Spam-free pancakes: flour, eggs, milk.")


def serious_violations(page):
    violations = Axe().run(page).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {', '.join(' '.join(n['target']) for n in v['nodes'])}"
        for v in violations
        if v["impact"] in FAILING_IMPACTS
    ]


def log_in(page, live_server, username, password):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("form [type=submit]")


def test_a_submitter_appeals_and_a_second_reviewer_reverses_it(browser, live_server, item, admin_user):
    submitter = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = submitter.new_page()
        log_in(page, live_server, "sam", "sam-pass-123")
        page.goto(f"{live_server.url}/c/{item.pk}/")
        form = page.locator("form.appeal-form")
        expect(form).to_be_visible()
        assert serious_violations(page) == []

        form.locator("textarea").fill("It is a pancake recipe; the word is in its title only.")
        page.screenshot(path=SCREENSHOTS / "appeal-form.png", full_page=True)
        page.get_by_role("button", name="Send appeal").click()
        expect(page.locator(".appeal-status")).to_contain_text("Your appeal is open")
        assert serious_violations(page) == []
        assert Appeal.objects.get().status == "open"

        reviewer = browser.new_context(viewport={"width": 1280, "height": 900})
        try:
            admin = reviewer.new_page()
            admin.goto(f"{live_server.url}/admin/login/")
            admin.fill("#id_username", "admin")
            admin.fill("#id_password", "admin-pass")
            admin.click("input[type=submit]")
            admin.get_by_role("link", name="1 appeal waiting").click()
            expect(admin.locator(".stash-appeal-text")).to_contain_text("pancake recipe")
            expect(admin.locator(".stash-appeal-decision")).to_contain_text("Rejected by the reviewer rita.")
            assert serious_violations(admin) == []
            admin.screenshot(path=SCREENSHOTS / "appeals-queue.png", full_page=True)
            admin.fill("textarea[name=note]", "A recipe: the word is harmless here.")
            admin.get_by_role("button", name="Reverse").click()
            expect(admin.locator(".messagelist")).to_contain_text("it is accepted now")
        finally:
            reviewer.close()

        page.reload()
        expect(page.locator(".appeal-status")).to_contain_text("the decision was reversed")
        expect(page.locator(".appeal-note")).to_have_text("A recipe: the word is harmless here.")
    finally:
        submitter.close()
