"""In Chromium: log in, submit through the form, and watch the status page turn into the verdict."""

import pytest
from django.contrib.auth.models import Permission
from playwright.sync_api import expect

from stash.db import publishing
from stash.models import Content

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit",
        name="Audit",
        hooks=[
            {"hook": "require_fields", "params": {"fields": ["text"]}, "label": "Needs text"},
            {"hook": "keyword_blocklist", "params": {"words": ["spam"]}, "label": "No spam"},
        ],
    )


@pytest.fixture
def submitter(django_user_model):
    user = django_user_model.objects.create_user("sam", password="pass-word-123")
    user.user_permissions.add(Permission.objects.get(codename="add_content"))
    return user


def log_in_to_submit(page, live_server):
    page.goto(f"{live_server.url}/s/audit/submit/")
    page.wait_for_url(f"{live_server.url}/accounts/login/?next=/s/audit/submit/")
    page.fill("#id_username", "sam")
    page.fill("#id_password", "pass-word-123")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/s/audit/submit/")


class HeldBroker:
    """Stands in for Celery at the publishing boundary: holds messages until ``release()`` sends them."""

    def __init__(self, real):
        self.real = real
        self.held = []

    def send_task(self, name, args=(), **options):
        self.held.append((name, args, options))

    def release(self):
        for name, args, options in self.held:
            self.real.send_task(name, args=args, **options)


def test_a_submission_turns_into_its_verdict_without_a_reload(page, live_server, worker, audit, submitter, monkeypatch):
    broker = HeldBroker(publishing.current_app)
    monkeypatch.setattr(publishing, "current_app", broker)  # so that the page is seen waiting first
    log_in_to_submit(page, live_server)
    page.fill("#id_text", "hello from the browser")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url(f"{live_server.url}/c/*/")
    status = page.locator("#verdict .status")
    expect(status).to_have_text("Waiting for the hooks to judge it…")
    page.evaluate("window.stillTheSamePage = true")

    broker.release()
    expect(status).to_have_text("Accepted", timeout=30_000)
    expect(page.locator("#verdict ol.trail li")).to_have_text(["Needs text kept it.", "No spam kept it."])
    assert page.evaluate("window.stillTheSamePage") is True
    content = Content.objects.get()
    assert page.url == f"{live_server.url}/c/{content.pk}/"
    assert (content.status, content.source, content.submitted_by) == ("accepted", "form", submitter)


def test_a_rejected_file_submission_shows_the_hook_and_the_reason(page, live_server, worker, audit, submitter):
    log_in_to_submit(page, live_server)
    page.fill("#id_text", "cheap spam here")
    page.set_input_files("#id_file", files=[{"name": "note.txt", "mimeType": "text/plain", "buffer": b"a note"}])
    page.fill("#id_data", '{"channel": "browser"}')
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url(f"{live_server.url}/c/*/")

    expect(page.locator("#verdict .status")).to_have_text(
        "Rejected: contains blocked word 'spam' in text", timeout=30_000
    )
    expect(page.locator("#verdict .reason")).to_have_text("contains blocked word 'spam' in text")
    expect(page.locator("#verdict ol.trail li").nth(1)).to_have_text(
        "No spam dropped it: contains blocked word 'spam' in text."
    )
    expect(page.get_by_text("File: note.txt")).to_be_visible()
    expect(page.locator("pre.data")).to_have_text('{\n  "channel": "browser"\n}')
    assert Content.objects.get().payload["data"] == {"channel": "browser"}


def test_the_pages_fit_a_phone_screen(browser, live_server, audit, submitter):
    context = browser.new_context(viewport={"width": 360, "height": 740})
    phone = context.new_page()
    try:
        log_in_to_submit(phone, live_server)
        for path in ("/", "/s/audit/submit/"):
            phone.goto(f"{live_server.url}{path}")
            assert phone.evaluate("document.documentElement.scrollWidth") <= 360, path
    finally:
        context.close()


def test_the_api_docs_render_from_local_files(page, live_server):
    """Swagger UI at /api/docs/ loads its scripts from this server, not a CDN, and lists the operations."""
    outside = []
    page.on("request", lambda request: None if request.url.startswith(live_server.url) else outside.append(request.url))
    page.goto(f"{live_server.url}/api/docs/")
    expect(page.locator(".swagger-ui .title")).to_contain_text("stash API")
    expect(page.locator(".opblock-summary-path", has_text="/api/contents/bulk/")).to_be_visible()
    assert outside == []
