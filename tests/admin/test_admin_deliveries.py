"""The admin shows sinks apart: their deliveries after the verdict in the trail, and counters per kind of hook."""

import re

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from stash import processing
from stash.models import Content, Delivery, HookConfig

pytestmark = pytest.mark.django_db

NOTIFY = {"hook": "email", "label": "Notify", "params": {"to": ["ops@example.com"]}}


@pytest.fixture
def stash(make_stash):
    """Needs text, then a sink put between the filters, then a transform and a blocklist."""
    return make_stash(
        "audit",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            NOTIFY,
            {"hook": "normalize_text", "label": "Tidy", "params": {"lowercase": True}},
            {"hook": "keyword_blocklist", "label": "Blocklist", "params": {"words": ["spam"]}},
        ],
    )


def judge(stash, text):
    content = Content.objects.create(stash=stash, payload={"text": text})
    processing.judge([content.pk])
    return content


def cells(page, row_class):
    """The text of each cell of the rows whose class starts with ``row_class``."""
    rows = re.findall(rf'<tr class="{row_class}[^"]*">(.*?)</tr>', page, re.S)
    return [
        [" ".join(re.sub(r"<[^>]+>", " ", cell).split()) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in rows
    ]


def test_the_items_trail_numbers_filters_and_transforms_and_lists_deliveries_after_the_verdict(admin_client, stash):
    content = judge(stash, "Hello")
    Delivery.objects.update(status="failed", attempts=6, last_error="SMTPServerDisconnected: gone")

    page = admin_client.get(reverse("admin:stash_content_change", args=[content.pk])).content.decode()

    steps = cells(page, "stash-outcome-")
    assert [row[:2] for row in steps] == [
        ["1", "Needs text require_fields"],
        ["2", "Tidy normalize_text"],
        ["3", "Blocklist keyword_blocklist"],
    ]
    assert "After the verdict: its sinks&#x27; deliveries" in page or "After the verdict: its sinks' deliveries" in page
    [delivery] = cells(page, "stash-delivery-")
    assert delivery[:5] == ["Notify", "on_accept", "failed", "6", "SMTPServerDisconnected: gone"]
    assert delivery[5].startswith("updated ")


def test_a_delivered_sink_shows_when(admin_client, stash):
    content = judge(stash, "Hello")
    Delivery.objects.update(status="delivered", attempts=1, delivered_at=timezone.now())

    page = admin_client.get(reverse("admin:stash_content_change", args=[content.pk])).content.decode()

    [delivery] = cells(page, "stash-delivery-")
    assert delivery[2:4] == ["delivered", "1"] and delivery[5].startswith("delivered ")


def test_the_hook_list_shows_counters_that_fit_each_kind(admin_client, stash):
    judge(stash, "Hello")  # Tidy changes it (lowercase)
    judge(stash, "spam")  # Tidy keeps it as it is; the blocklist drops it
    rows = list(Delivery.objects.order_by("pk"))
    Delivery.objects.filter(pk=rows[0].pk).update(status="delivered")
    Delivery.objects.filter(pk=rows[1].pk).update(status="retrying")

    with CaptureQueriesContext(connection) as ctx:
        page = admin_client.get(reverse("admin:stash_hookconfig_changelist")).content.decode().replace("\xa0", " ")

    assert "2 runs · 2 kept · 0 dropped · 0 held<br>0 errors · 0 overturned" in page  # Needs text
    assert "2 runs · 1 changed · 1 unchanged<br>0 errors" in page  # Tidy
    assert "2 runs · 1 kept · 1 dropped · 0 held" in page  # Blocklist
    assert "1 delivered · 0 failed · 1 retrying" in page  # Notify
    assert sum("stash_delivery" in q["sql"] for q in ctx.captured_queries) == 1


def test_counters_say_1_run_and_1_error(admin_client, make_stash):
    stash = make_stash("audit", hooks=[("require_fields", {"fields": ["text"]})])
    judge(stash, "Hello")
    HookConfig.objects.update(errors_count=1)

    page = admin_client.get(reverse("admin:stash_hookconfig_changelist")).content.decode().replace("\xa0", " ")

    assert "1 run · 1 kept · 0 dropped · 0 held<br>1 error · 0 overturned" in page


def test_a_sink_called_in_process_says_it_keeps_no_record(admin_client, make_stash):
    make_stash("audit", hooks=[("log", {})])

    page = admin_client.get(reverse("admin:stash_hookconfig_changelist")).content.decode()

    assert "called in process after each verdict; not recorded" in page


def test_the_status_page_lists_deliveries_for_staff_only(client, django_user_model, stash):
    content = judge(stash, "Hello")
    Delivery.objects.update(status="retrying", attempts=2, last_error="SMTPServerDisconnected: gone")
    viewer = django_user_model.objects.create_user("vera", password="pw")
    viewer.user_permissions.add(Permission.objects.get(codename="view_content"))
    staff = Client()
    staff.force_login(viewer)
    session = client.session
    session[processing.SUBMITTED_SESSION_KEY] = [str(content.pk)]  # its submitter's browser
    session.save()

    seen = staff.get(f"/c/{content.pk}/").content.decode()
    submitters = client.get(f"/c/{content.pk}/").content.decode()

    assert "Accepted" in submitters and "After the verdict" not in submitters
    assert "After the verdict" in seen
    assert (
        "<strong>Notify</strong> (on_accept): retrying, 2 attempts; last error: SMTPServerDisconnected: gone." in seen
    )
