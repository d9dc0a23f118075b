"""The submit form of a stash whose json_schema hook declares its payload: one field per property."""

import pytest

from stash import processing
from stash.models import Content, HookConfig

pytestmark = pytest.mark.django_db

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "title": "Title", "description": "What it is about.", "maxLength": 40},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "copies": {"type": "integer"},
        "urgent": {"type": "boolean"},
        "channel": {"enum": ["web", "phone"]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        "sizes": {"type": "array", "items": {"type": "integer", "minimum": 1}},
        "colours": {"type": "array", "items": {"enum": ["red", "blue"]}, "uniqueItems": True},
    },
    "required": ["title", "channel"],
}


@pytest.fixture
def shop(make_stash):
    return make_stash(
        "shop", allow_anonymous=True, hooks=[{"hook": "json_schema", "params": {"schema": SCHEMA}, "label": "Shape"}]
    )


def post(client, **fields):
    return client.post("/s/shop/submit/", {f"payload-{name}": value for name, value in fields.items()})


def test_the_form_asks_for_each_property_with_its_label_help_and_required_mark(shop, client):
    html = client.get("/s/shop/submit/").content.decode()
    assert 'name="data"' not in html and 'name="text"' not in html
    assert '<label for="id_payload-title">Title <span class="required">(required)</span></label>' in html
    assert "What it is about." in html
    assert 'type="number" name="payload-score"' in html and 'name="payload-copies"' in html
    assert 'type="checkbox" name="payload-urgent"' in html
    assert '<option value="&quot;phone&quot;">phone</option>' in html
    assert '<textarea name="payload-tags"' in html and "One per line." in html
    assert "<legend>colours</legend>" in html and 'value="&quot;red&quot;"' in html


def test_a_valid_form_saves_the_object_its_fields_make(shop, client):
    response = post(
        client,
        title="Lamp",
        score="0.5",
        copies="3",
        urgent="on",
        channel='"phone"',
        tags="desk\n\n light \n",
        sizes="2\n10",
        colours=['"red"', '"blue"'],
    )
    content = Content.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/c/{content.pk}/"
    assert content.payload == {
        "title": "Lamp",
        "score": 0.5,
        "copies": 3,
        "urgent": True,
        "channel": "phone",
        "tags": ["desk", "light"],
        "sizes": [2, 10],
        "colours": ["red", "blue"],
    }
    processing.judge([content.pk])
    assert Content.objects.get().status == "accepted"  # the hook agrees with its form


def test_what_nobody_filled_in_is_left_out_but_an_unticked_box_is_false(shop, client):
    post(client, title="Lamp", channel='"web"', score="1")
    assert Content.objects.get().payload == {"title": "Lamp", "channel": "web", "score": 1, "urgent": False}


def test_an_invalid_form_shows_each_error_on_its_field_and_saves_nothing(shop, client):
    response = post(client, score="2", copies="many", channel='"fax"', tags="a\nb\nc\nd", sizes="3\n0", title="x" * 41)
    html = response.content.decode()
    assert response.status_code == 200
    assert not Content.objects.exists()
    for name, error in [
        ("title", "Ensure this value has at most 40 characters (it has 41)."),
        ("score", "Ensure this value is less than or equal to 1."),
        ("copies", "Enter a whole number."),
        ("channel", "Select a valid choice."),
        ("tags", "Give at most 3."),
        ("sizes", "Line 2: Ensure this value is greater than or equal to 1."),
    ]:
        field = html.split(f'name="payload-{name}"', 1)[1].split('class="field', 1)[0]
        assert error in field, name


def test_a_required_field_left_empty_is_told_on_the_field(shop, client):
    html = post(client, title="", channel="").content.decode()
    assert html.count("This field is required.") == 2
    assert not Content.objects.exists()


def test_any_property_name_gets_a_field_of_its_own(make_stash, client):
    properties = {"_1": {"type": "string"}, "a b": {"type": "string"}, "plain": {"type": "string"}}
    make_stash(
        "shop", allow_anonymous=True, hooks=[("json_schema", {"schema": {"type": "object", "properties": properties}})]
    )
    html = client.get("/s/shop/submit/").content.decode()
    for field, label in [("_0", "_1"), ("_1", "a b"), ("plain", "plain")]:
        assert f'<label for="id_payload-{field}">{label}</label>' in html
    client.post("/s/shop/submit/", {"payload-_0": "first", "payload-_1": "second", "payload-plain": "third"})
    assert Content.objects.get().payload == {"_1": "first", "a b": "second", "plain": "third"}


def test_the_payload_check_of_the_api_still_applies(make_stash, client):
    schema = {"type": "object", "properties": {"body": {"type": "string"}}}
    make_stash("shop", allow_anonymous=True, max_payload_bytes=64, hooks=[("json_schema", {"schema": schema})])
    html = post(client, body="x" * 100).content.decode()
    assert "at most 64" in html
    assert not Content.objects.exists()


def test_a_stash_without_a_schema_a_disabled_one_or_one_no_form_can_show_takes_raw_json(shop, client):
    config = HookConfig.objects.get(stash=shop)
    config.enabled = False
    config.save()
    assert 'name="data"' in client.get("/s/shop/submit/").content.decode()

    nested = {"type": "object", "properties": {"address": {"type": "object"}}}
    HookConfig.objects.filter(pk=config.pk).update(enabled=True, params={"schema": nested})
    assert 'name="data"' in client.get("/s/shop/submit/").content.decode()


def test_the_status_page_shows_the_properties_and_its_json_the_payload_as_stored(shop, client, make_stash):
    post(client, title="<b>Lamp</b>", channel='"web"')
    content = Content.objects.get()
    html = client.get(f"/c/{content.pk}/").content.decode()
    assert "<dt>title</dt><dd>&lt;b&gt;Lamp&lt;/b&gt;</dd>" in html
    Content.objects.filter(pk=content.pk).update(payload={"title": "Lamp (edited)", "channel": "web"})
    assert "<dt>title</dt><dd>Lamp (edited)</dd>" in client.get(f"/c/{content.pk}/status/").json()["payload_html"]


@pytest.mark.parametrize(
    "fields",
    [
        {"score": "inf", "copies": "1e400"},
        {"score": "nan", "copies": "1.5"},
        {"colours": ['"purple"', "not json"]},
        {"sizes": "1\n\x00"},
        {"sizes": "1.5\n-0"},
    ],
)
def test_odd_input_is_refused_on_its_field_never_a_server_error(shop, client, fields):
    response = post(client, title="Lamp", channel='"web"', **fields)
    assert response.status_code == 200
    assert 'class="errors"' in response.content.decode()
    assert not Content.objects.exists()
