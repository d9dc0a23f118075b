"""Golden examples' ``service_answers`` through the API: created, read and changed with the example,
refused with the field named, carried by the pipeline document (GET and PUT), used by a run."""

import pytest

from stash.models import Example

from ..support.examples import vendor_stash

pytestmark = pytest.mark.django_db

EXAMPLES = "/api/stashes/vendor/examples/"
PIPELINE = "/api/stashes/vendor/pipeline/"
DROP = {"Vendor": {"outcome": "drop", "reason": "toxic (0.97)"}}
PERMS = (
    "stash.change_stash",
    "stash.view_hookconfig",
    "stash.add_hookconfig",
    "stash.change_hookconfig",
    "stash.delete_hookconfig",
    "stash.view_example",
    "stash.add_example",
    "stash.change_example",
    "stash.delete_example",
)


@pytest.fixture
def vendor(make_stash, settings):
    return vendor_stash(make_stash, settings)


@pytest.fixture
def client(api, make_user):
    return api(make_user("olga", *PERMS))


def test_an_example_with_a_mocked_answer_is_made_read_changed_and_run(client, vendor):
    body = {"name": "toxic", "payload": {"text": "hi"}, "verdict": "rejected", "reason_code": "moderation"}
    created = client.post(EXAMPLES, {**body, "service_answers": DROP}, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["service_answers"] == DROP
    url = f"{EXAMPLES}{created.json()['id']}/"

    run = client.post(f"{EXAMPLES}run/").json()
    assert run["passed"] is True
    assert run["results"][0]["given"] == ["Vendor: dropped"]
    assert run["results"][0]["reason"] == "the service's answer, given by the example: toxic (0.97)"

    changed = client.patch(url, {"service_answers": {"Vendor": {"outcome": "keep"}}}, format="json")
    assert changed.status_code == 200
    result = client.post(f"{EXAMPLES}run/").json()["results"][0]
    assert (result["passed"], result["verdict"]) == (False, "accepted")

    plain = client.post(EXAMPLES, {**body, "name": "plain", "verdict": "waiting"}, format="json")
    assert plain.json()["service_answers"] == {}


@pytest.mark.parametrize(
    "answers, message",
    [
        ({"Vendor": {"outcome": "maybe"}}, 'Vendor: the outcome must be keep, drop or hold, not "maybe".'),
        (
            {"No spam": {"outcome": "keep"}},
            "No spam: the stash has no asynchronous hook of this label (they are: Vendor).",
        ),
        ([1], "The service_answers must be a JSON object, not an array."),
    ],
)
def test_a_bad_mock_is_a_400_naming_the_field(client, vendor, answers, message):
    response = client.post(
        EXAMPLES,
        {"name": "bad", "payload": {"text": "hi"}, "verdict": "accepted", "service_answers": answers},
        format="json",
    )
    assert response.status_code == 400
    assert response.json() == {"service_answers": [message]}
    assert not Example.objects.exists()


def test_the_document_carries_the_mock_both_ways(client, vendor):
    Example.objects.create(stash=vendor, name="toxic", payload={"text": "hi"}, verdict="rejected", service_answers=DROP)
    document = client.get(PIPELINE).json()
    assert document["examples"][0]["service_answers"] == DROP

    document["examples"][0]["service_answers"] = {"Vendor": {"outcome": "hold", "reason": "unsure"}}
    document["examples"][0]["verdict"] = "held"
    response = client.put(PIPELINE, document, format="json")
    assert response.status_code == 200, response.json()
    assert [result["status"] for result in response.json()["examples"]] == ["passed"]
    assert client.get(PIPELINE).json()["examples"] == document["examples"]

    document["examples"][0]["service_answers"] = {"Vendor": {"outcome": "hold", "reason": 5}}
    refused = client.put(PIPELINE, document, format="json")
    assert refused.status_code == 400
    assert refused.json()["examples"] == {"0": {"service_answers": ["toxic: Vendor: the reason must be a string."]}}
    assert Example.objects.get().service_answers == {"Vendor": {"outcome": "hold", "reason": "unsure"}}


def test_the_schema_describes_the_mock(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    field = schema["components"]["schemas"]["Example"]["properties"]["service_answers"]
    assert field["additionalProperties"]["properties"]["outcome"]["enum"] == ["keep", "drop", "hold"]
    assert "given" in schema["components"]["schemas"]["ExampleResult"]["properties"]
