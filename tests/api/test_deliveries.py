"""GET /api/contents/<id>/ lists the item's sink deliveries: which sink, which event, how it went."""

import pytest

from stash import processing
from stash.models import Content, Delivery, HookConfig

pytestmark = pytest.mark.django_db

MAIL = {"hook": "email", "label": "Notify", "params": {"to": ["ops@example.com"]}}


def test_an_item_lists_each_sink_delivery_with_its_attempts_and_last_error(api, make_stash, make_user):
    stash = make_stash("audit", hooks=[("require_fields", {"fields": ["text"]}), MAIL])
    content = Content.objects.create(stash=stash, payload={"text": "hello"})
    processing.judge([content.pk])
    Delivery.objects.update(status="retrying", attempts=2, last_error="SMTPServerDisconnected: gone")
    notify = HookConfig.objects.get(hook="email")

    response = api(make_user("vera", "stash.view_content")).get(f"/api/contents/{content.pk}/")

    assert response.status_code == 200
    [delivery] = response.json()["deliveries"]
    assert {key: delivery[key] for key in ("hook_config", "label", "hook", "revision", "event")} == {
        "hook_config": notify.pk,
        "label": "Notify",
        "hook": "email",
        "revision": 1,
        "event": "on_accept",
    }
    assert (delivery["status"], delivery["attempts"], delivery["last_error"]) == (
        "retrying",
        2,
        "SMTPServerDisconnected: gone",
    )
    assert delivery["created_at"] and delivery["updated_at"] and delivery["delivered_at"] is None


def test_an_item_without_sinks_has_no_deliveries(api, audit, make_user):
    content = Content.objects.create(stash=audit, payload={"text": "hello"})
    processing.judge([content.pk])

    response = api(make_user("vera", "stash.view_content")).get(f"/api/contents/{content.pk}/")

    assert response.json()["deliveries"] == []


def test_the_schema_describes_deliveries(api):
    schema = api().get("/api/schema/?format=json").json()

    detail = schema["components"]["schemas"]["ContentDetail"]["properties"]["deliveries"]
    assert detail["type"] == "array"
    fields = schema["components"]["schemas"]["Delivery"]["properties"]
    assert set(fields) >= {"hook_config", "label", "event", "status", "attempts", "last_error", "delivered_at"}
    assert schema["components"]["schemas"]["DeliveryStatusEnum"]["enum"] == [
        "pending",
        "retrying",
        "delivered",
        "failed",
    ]
