"""The status ``waiting`` wherever statuses show, the callback endpoint in the schema, its throttle,
and a waiting item's review refused (409)."""

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from stash.models import Content

from ..support.metrics_support import scrape
from ..support.review import reviewer

pytestmark = pytest.mark.django_db


@pytest.fixture
def waiting(audit):
    item = Content.objects.create(stash=audit, payload={"text": "hello"})
    Content.objects.filter(pk=item.pk).update(status="waiting", reason="waiting for Vendor: asked")
    return Content.objects.get(pk=item.pk)


def test_the_schema_declares_the_callback_endpoint_without_login_and_its_answers(api):
    schema = api().get("/api/schema/?format=json").json()

    operation = schema["paths"]["/api/callbacks/{token}/"]["post"]
    assert set(operation["responses"]) >= {"202", "400", "401", "404", "409", "429"}
    assert operation.get("security", [{}]) in ([], [{}])  # no login
    body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert set(schema["components"]["schemas"][body]["properties"]) == {"outcome", "reason"}
    assert "waiting" in schema["components"]["schemas"]["ContentStatusEnum"]["enum"]


def test_callbacks_are_throttled_per_address(settings, audit):
    settings.STASH_THROTTLE_RATES = {**settings.STASH_THROTTLE_RATES, "callback": "3/minute"}
    client = APIClient()
    statuses = [
        client.post("/api/callbacks/unknown/", {"outcome": "keep"}, format="json").status_code for _ in range(4)
    ]
    assert statuses == [404, 404, 404, 429]


def test_a_waiting_item_shows_and_filters_as_waiting_in_the_api(api, waiting, django_user_model):
    client = api(reviewer(django_user_model, "rita"))

    assert client.get(f"/api/contents/{waiting.pk}/").json()["status"] == "waiting"
    listed = client.get("/api/contents/?status=waiting").json()["results"]
    assert [entry["id"] for entry in listed] == [str(waiting.pk)]


@pytest.mark.parametrize("decision", ["approve", "reject", "overturn"])
def test_reviewing_a_waiting_item_is_refused_with_409(api, waiting, django_user_model, decision):
    client = api(reviewer(django_user_model, "rita"))

    response = client.post(f"/api/contents/{waiting.pk}/review/", {"decision": decision}, format="json")

    assert response.status_code == 409
    assert "waiting for an outside moderation service" in response.json()["detail"]
    assert Content.objects.get(pk=waiting.pk).status == "waiting"


def test_metrics_count_waiting_items(client, waiting):
    assert scrape(client).value("stash_items", stash="audit", status="waiting") == 1


def test_the_status_page_says_a_service_is_checking_it(waiting, django_user_model):
    browser = Client()
    browser.force_login(reviewer(django_user_model, "rita"))

    answer = browser.get(f"/c/{waiting.pk}/status/").json()

    assert answer["status"] == "waiting"
    assert "Being checked by a moderation service" in answer["html"]
    assert answer.get("done") in (False, None)


def test_exports_take_the_waiting_status(waiting):
    out = io.StringIO()
    call_command("stash_export", "audit", "--status", "waiting", stdout=out)

    [line] = out.getvalue().splitlines()
    assert json.loads(line)["status"] == "waiting"


def test_the_admin_lists_and_filters_waiting_items(admin_client, waiting):
    page = admin_client.get("/admin/stash/content/?status__exact=waiting")

    assert page.status_code == 200
    assert str(waiting.pk) in page.content.decode()
    assert "waiting for a service" in page.content.decode()
