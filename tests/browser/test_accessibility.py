"""axe-core over every public and admin page, in real Chromium: no critical or serious violation.

Pages are listed as URL builders (``Page``): add one for a new page. The admin's changelists, add
forms and change forms are read from the admin site itself, so a newly registered model is checked
without a line here (and fails the test if the demo data has no row of it to open).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import pytest
from axe_playwright_python.sync_playwright import Axe
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth.models import Group
from django.test import RequestFactory
from django.urls import reverse
from rest_framework.authtoken.models import Token

from stash import processing
from stash.models import Content, Example, Failure, HookConfig, PipelineRun

pytestmark = pytest.mark.django_db(transaction=True)

#: The impacts that fail the test; "moderate" and "minor" ones are not checked.
FAILING_IMPACTS = {"critical", "serious"}


@dataclass
class Demo:
    """What the pages show: a stash with hooks, items of every status, their runs."""

    stash: object
    items: dict  # status -> an item with that status
    run: PipelineRun
    config: HookConfig


@dataclass(frozen=True)
class Page:
    """One page to check: its name, its URL built from the demo, and what to do on it first."""

    name: str
    url: Callable[[Demo], str]
    then: Callable | None = None  # called with the Playwright page once it has loaded


def _simulate(page):
    page.fill("#id_payload", '{"text": "free money"}')
    page.click("input[type=submit]")
    page.wait_for_selector("#simulation")


def _replay(page):
    page.click("input[type=submit]")
    page.wait_for_selector("#replay")


def _replay_draft(page):
    """The stash page's "Replay these hooks (unsaved)", opened in this tab rather than a new one."""
    button = page.locator("input[name=_draft][value='Replay these hooks (unsaved)']")
    button.evaluate("button => button.removeAttribute('formtarget')")
    button.click()
    page.wait_for_selector("#draft")
    page.wait_for_selector("#replay")


def _upload(page):
    document = {
        "format": "stash.pipeline",
        "format_version": 1,
        "hooks": [{"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}}],
    }
    page.set_input_files(
        "#id_file",
        files=[{"name": "pipeline.json", "mimeType": "application/json", "buffer": json.dumps(document).encode()}],
    )
    page.click("#upload input[type=submit]")
    page.wait_for_selector("#preview")


def _preview_statements(page):
    page.click("input[name=_preview]")
    page.wait_for_selector("#statement-preview")


def _params_open_and_a_hook_moved(page):
    page.locator("#hooks-group tr.has_original .stash-params-fold > summary").first.click()
    page.get_by_role("button", name="Move No spam up").click()
    page.wait_for_selector(".stash-order-unsaved:not([hidden])")


def _refused_save(page):
    page.fill("#id_slug", "not a slug!")
    page.click("input[name=_continue]")
    page.wait_for_selector(".errornote")


def _refused_submit(page):
    page.fill("#id_data", "{not json")
    page.click("form.submit button[type=submit]")
    page.wait_for_selector(".errorlist")


def _run_examples(page):
    page.click("input[name=_run]")
    page.wait_for_selector("#examples-run")


#: Pages anyone may open, checked without logging in.
ANONYMOUS_PAGES = [
    Page("index", lambda demo: reverse("stash:index")),
    Page("login", lambda demo: reverse("login")),
    Page("admin login", lambda demo: reverse("admin:login")),
]


def per_status(name, url_name):
    """A page for an item of each status: ``url_name`` takes the item's id."""
    return [
        Page(f"{name} ({status})", lambda demo, status=status: reverse(url_name, args=[demo.items[status].pk]))
        for status in Content.Status.values
    ]


def of_stash(url_name, query=""):
    """The URL builder of a page of the demo stash."""
    return lambda demo: reverse(url_name, args=[demo.stash.pk]) + query


#: Pages checked as a superuser, besides every admin changelist, add form and change form.
PAGES = [
    Page("index", lambda demo: reverse("stash:index")),
    Page("submit form", lambda demo: reverse("stash:submit", args=[demo.stash.slug])),
    Page("submit form, errors shown", lambda demo: reverse("stash:submit", args=[demo.stash.slug]), _refused_submit),
    *per_status("status page", "stash:content"),
    Page("admin index", lambda demo: reverse("admin:index")),
    Page("admin app index", lambda demo: reverse("admin:app_list", args=["stash"])),
    Page("stash page with hooks and charts", of_stash("admin:stash_stash_change")),
    Page(
        "stash page, params open, a hook moved (unsaved)",
        of_stash("admin:stash_stash_change"),
        _params_open_and_a_hook_moved,
    ),
    Page("stash page, a save refused (errors shown)", of_stash("admin:stash_stash_change"), _refused_save),
    Page("simulate", of_stash("admin:stash_stash_simulate")),
    Page("simulate, with a result", of_stash("admin:stash_stash_simulate"), _simulate),
    Page("replay", of_stash("admin:stash_stash_replay")),
    Page("replay, with a result", of_stash("admin:stash_stash_replay"), _replay),
    Page("judging again, followed", of_stash("admin:stash_stash_judging", "?sent=3&since=1765000000")),
    Page("replay of a draft, with a result", of_stash("admin:stash_stash_change"), _replay_draft),
    Page(
        "hooks of one stash (drag to order)",
        lambda demo: reverse("admin:stash_hookconfig_changelist") + f"?stash__id__exact={demo.stash.pk}",
    ),
    Page("hook config page", lambda demo: reverse("admin:stash_hookconfig_change", args=[demo.config.pk])),
    Page("held items", lambda demo: reverse("admin:stash_content_changelist") + "?status__exact=held"),
    Page("review queue", of_stash("admin:stash_stash_review")),
    Page("review queue of every stash", lambda demo: reverse("admin:stash_content_review_all")),
    Page("appeals", lambda demo: reverse("admin:stash_content_appeals")),
    Page("failures", lambda demo: reverse("admin:stash_content_failures")),
    Page("shadows", of_stash("admin:stash_stash_shadows")),
    Page(
        "a shadow and its report",
        lambda demo: reverse("admin:stash_stash_shadow", args=[demo.stash.pk, demo.stash.shadows.get().pk]),
    ),
    Page("failures, filtered", lambda demo: reverse("admin:stash_content_failures") + f"?stash={demo.stash.pk}"),
    Page(
        "a group of failures",
        lambda demo: reverse("admin:stash_content_failure_group", args=[Failure.objects.get().group]),
    ),
    *per_status("item page", "admin:stash_content_change"),
    Page("run page", lambda demo: reverse("admin:stash_pipelinerun_change", args=[demo.run.pk])),
    Page("upload a pipeline", of_stash("admin:stash_stash_upload")),
    Page("upload a pipeline, its preview", of_stash("admin:stash_stash_upload"), _upload),
    Page("versions", of_stash("admin:stash_stash_versions")),
    Page("a version", lambda demo: reverse("admin:stash_stash_version", args=[demo.stash.pk, 2])),
    Page("two versions compared", of_stash("admin:stash_stash_compare", "?a=2&b=5")),
    Page("restore a version", lambda demo: reverse("admin:stash_stash_restore", args=[demo.stash.pk, 2])),
    Page("golden examples", of_stash("admin:stash_stash_examples")),
    Page("golden examples, run", of_stash("admin:stash_stash_examples"), _run_examples),
    Page("statement policy", of_stash("admin:stash_stash_statements")),
    Page("statement policy, a preview", of_stash("admin:stash_stash_statements"), _preview_statements),
    Page("password change", lambda demo: reverse("admin:password_change")),
]


def admin_pages(user):
    """A ``Page`` for the changelist, the add form and a change form of every model in the admin."""
    request = RequestFactory().get(reverse("admin:index"))
    request.user = user
    pages = []
    for app in admin.site.get_app_list(request):
        for entry in app["models"]:
            model, name = entry["model"], entry["name"]
            pages.append(Page(f"{name} list", lambda demo, url=entry["admin_url"]: url))
            if entry.get("add_url"):
                pages.append(Page(f"{name}: add", lambda demo, url=entry["add_url"]: url))
            obj = model._default_manager.order_by("pk").first()
            assert obj is not None, f"the demo has no {model._meta.label} to open its change form: add one"
            opts = model._meta
            url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
            pages.append(Page(f"{name}: change", lambda demo, url=url: url))
    return pages


@pytest.fixture
def demo(make_stash, admin_user, broker):
    stash = make_stash(
        "audit",
        name="Audit",
        allow_anonymous=True,
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam", "free money"]}},
            {
                "hook": "condition",
                "label": "Long ones wait",
                "params": {"expression": "size(payload.text) > 40", "action": "hold"},
            },
            {"hook": "max_size", "label": "At most 64 KB", "params": {"max_bytes": 65536}, "mode": "observe"},
            # Disabled: the stash page marks it with a badge; a sink: listed apart, after the verdict.
            {
                "hook": "webhook",
                "label": "Notify",
                "enabled": False,
                "params": {"url": "https://example.com/hooks/stash", "secret": "s3cret-s3cret-s3cret-s3cret"},
            },
        ],
    )
    texts = {"accepted": "hello", "rejected": "spam, spam", "held": "a long one, " * 5}
    items = {}
    for status, text in texts.items():
        for n in range(2):
            item = Content.objects.create(stash=stash, payload={"text": f"{text} {n}"}, submitted_by=admin_user)
            processing.judge([item.pk])
            item.refresh_from_db()
            assert item.status == status
            items[status] = item
    processing.overturn(Content.objects.filter(pk=items["rejected"].pk), admin_user, "not spam")
    for status in ("pending", "processing", "failed", "waiting"):
        items[status] = Content.objects.create(stash=stash, payload={"text": f"waits: {status}"})
    Content.objects.filter(pk=items["processing"].pk).update(status="processing", attempts=1)
    Content.objects.filter(pk=items["waiting"].pk).update(
        status="waiting", attempts=1, reason="waiting for Vendor: sent to the moderation service"
    )
    Content.objects.filter(pk=items["failed"].pk).update(
        status="failed", attempts=3, reason="No spam: the worker died 3 times"
    )
    processing.failures.record_gave_up([items["failed"].pk])
    processing.start_shadow(stash, version=stash.config_version, percent=50, count=100, user=admin_user)
    Example.objects.create(stash=stash, name="plain text", payload={"text": "hello"}, verdict="accepted")
    processing.example_from(items["rejected"], admin_user, verdict="rejected")
    Group.objects.create(name="Reviewers")
    # Someone else's failed logins, from elsewhere (the admin's own login would clear its own).
    seen = {
        "username": "intruder",
        "ip_address": "203.0.113.9",
        "user_agent": "curl/8",
        "http_accept": "*/*",
        "path_info": "/admin/login/",
    }
    AccessAttempt.objects.create(**seen, get_data="", post_data="username=intruder", failures_since_start=2)
    AccessFailureLog.objects.create(**seen)
    AccessLog.objects.create(**seen)
    Token.objects.create(user=admin_user)
    return Demo(
        stash=stash,
        items={status: Content.objects.get(pk=item.pk) for status, item in items.items()},
        run=PipelineRun.objects.filter(content=items["held"]).first(),
        config=stash.hooks.first(),
    )


def audit(page, url, then=None):
    """The critical and serious violations on ``url``, as lines: rule, impact, help, targets."""
    page.goto(url)
    if then is not None:
        then(page)
    results = Axe().run(page)
    lines = []
    for violation in results.response["violations"]:
        if violation["impact"] in FAILING_IMPACTS:
            targets = ", ".join(" ".join(node["target"]) for node in violation["nodes"])
            lines.append(
                f"  {violation['id']} ({violation['impact']}): {violation['help']}; "
                f"{len(violation['nodes'])} element(s): {targets}"
            )
    return lines


def check(page, base_url, demo, pages):
    failures = []
    for spec in pages:
        lines = audit(page, base_url + spec.url(demo), spec.then)
        if lines:
            failures.append(f"{spec.name} ({spec.url(demo)}):\n" + "\n".join(lines))
    return failures


def test_no_page_has_a_critical_or_serious_accessibility_violation(browser, live_server, demo, admin_user):
    anonymous = browser.new_context()
    try:
        page = anonymous.new_page()
        failures = check(page, live_server.url, demo, ANONYMOUS_PAGES)
        page.goto(f"{live_server.url}/admin/login/")
        page.fill("#id_username", "admin")
        page.fill("#id_password", "admin-pass")
        page.click("input[type=submit]")
        page.wait_for_url(f"{live_server.url}/admin/")
        failures += check(page, live_server.url, demo, PAGES + admin_pages(admin_user))
    finally:
        anonymous.close()
    assert not failures, "accessibility violations:\n" + "\n".join(failures)
