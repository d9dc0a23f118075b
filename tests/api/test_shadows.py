"""The shadows API: start, list with reports, read, stop, promote; permissions and every bad input."""

import pytest

from stash import processing
from stash.models import Example, PipelineVersion, Shadow

from ..support.shadows import run_shadow_messages, save_and_judge

pytestmark = pytest.mark.django_db

CHANGE = ("stash.change_stash", "stash.add_hookconfig", "stash.change_hookconfig", "stash.delete_hookconfig")


@pytest.fixture
def operator(make_user):
    return make_user("olga", "stash.view_hookconfig", *CHANGE)


@pytest.fixture
def reader(make_user):
    return make_user("rita", "stash.view_hookconfig")


def url(slug="audit", *rest):
    return "/".join([f"/api/stashes/{slug}/shadows", *map(str, rest)]) + "/"


def draft(stash, words=("spam", "eggs")):
    document = processing.export_document(stash)
    document["hooks"][1]["params"]["words"] = list(words)
    return document


def test_start_list_read_stop(api, audit, operator, broker, django_capture_on_commit_callbacks):
    client = api(operator)

    started = client.post(url(), {"document": draft(audit), "percent": 100, "count": 50}, format="json")

    assert started.status_code == 201, started.json()
    body = started.json()
    assert (body["status"], body["percent"], body["count"], body["version"]) == ("running", 100, 50, None)
    assert body["started_by"] == "olga"
    assert body["report"] == {
        "items": 0,
        "agreed": 0,
        "disagreed": 0,
        "matrix": {},
        "deciders": [],
        "disagreements": [],
        "time": {"mean_ms": None, "p95_ms": None},
    }
    save_and_judge(audit, [{"text": t} for t in ("hi", "eggs", "spam")], django_capture_on_commit_callbacks)
    assert run_shadow_messages(broker) == 0  # judged by the live worker: no message carries an item

    (listed,) = client.get(url()).json()
    assert listed["report"]["matrix"] == {"accepted/accepted": 1, "accepted/rejected": 1, "rejected/rejected": 1}
    assert listed["report"]["deciders"] == [{"live": "", "shadow": "keyword_blocklist", "count": 1}]
    one = client.get(url("audit", body["id"])).json()
    assert one["document"]["hooks"][1]["params"]["words"] == ["spam", "eggs"]
    assert one["report"]["disagreements"][0]["shadow"]["verdict"] == "rejected"

    stopped = client.post(url("audit", body["id"], "stop"))
    assert (stopped.status_code, stopped.json()["status"]) == (200, "stopped")
    again = client.post(url("audit", body["id"], "stop"))
    assert again.status_code == 409 and "not running" in again.json()["detail"]


def test_start_from_a_version(api, audit, operator):
    response = api(operator).post(url(), {"version": audit.config_version, "percent": 10, "minutes": 30}, format="json")

    assert response.status_code == 201, response.json()
    assert (response.json()["version"], response.json()["count"]) == (audit.config_version, None)
    assert response.json()["ends_at"]


def test_a_second_shadow_while_one_runs_is_a_conflict(api, audit, operator):
    client = api(operator)
    assert client.post(url(), {"version": 1, "percent": 10, "count": 5}, format="json").status_code == 201

    response = client.post(url(), {"document": draft(audit), "percent": 10, "count": 5}, format="json")

    assert response.status_code == 409
    assert "A shadow of audit is running" in response.json()["detail"]
    assert Shadow.objects.count() == 1


@pytest.mark.parametrize(
    "body, field",
    [
        ({"version": 1, "percent": 0, "count": 5}, "percent"),
        ({"version": 1, "percent": 101, "count": 5}, "percent"),
        ({"version": 1, "percent": "lots", "count": 5}, "percent"),
        ({"version": 1, "count": 5}, "percent"),
        ({"version": 1, "percent": 5, "count": 0}, "count"),
        ({"version": 1, "percent": 5, "count": -3}, "count"),
        ({"version": 1, "percent": 5}, "count"),
        ({"version": 1, "percent": 5, "minutes": 0}, "minutes"),
        ({"percent": 5, "count": 5}, "document"),
        ({"version": 1, "document": {}, "percent": 5, "count": 5}, "document"),
        ({"version": 99, "percent": 5, "count": 5}, "version"),
        ({"version": "one", "percent": 5, "count": 5}, "version"),
        ({"version": 10**30, "percent": 5, "count": 5}, "version"),
        ({"version": 1, "percent": [50], "count": 5}, "percent"),
        ({"version": 1, "percent": 5, "count": 10**30}, "count"),
        ({"document": {"format": "other"}, "percent": 5, "count": 5}, "format"),
        ({"document": "text", "percent": 5, "count": 5}, "document"),
        ({"version": 1, "percent": 5, "count": 5, "sinks": True}, "sinks"),
        ({"version": 1, "document": None, "percent": 5, "count": 5}, "document"),
        ({"version": 1, "percent": 5, "count": None, "minutes": 5}, "count"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(api, audit, operator, body, field):
    response = api(operator).post(url(), body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()
    assert not Shadow.objects.exists()


def test_a_body_that_is_no_object_is_a_400(api, audit, operator):
    response = api(operator).post(url(), [1, 2], format="json")

    assert response.status_code == 400


def test_permissions(api, audit, reader, operator):
    assert api().get(url()).status_code == 401
    assert api(reader).get(url()).status_code == 200
    refused = api(reader).post(url(), {"version": 1, "percent": 5, "count": 5}, format="json")
    assert refused.status_code == 403 and "permissions to change stashes" in refused.json()["detail"]
    shadow = processing.start_shadow(audit, version=1, percent=5, count=5)
    assert api(reader).post(url("audit", shadow.pk, "stop")).status_code == 403
    assert api(reader).post(url("audit", shadow.pk, "promote")).status_code == 403
    assert api(operator).get(url("nope")).status_code == 404
    assert api(operator).get(url("audit", shadow.pk + 1)).status_code == 404
    assert api(operator).post(url("audit", 10**30, "stop")).status_code == 404


def test_promote_makes_one_version(api, audit, operator):
    shadow = processing.start_shadow(audit, document=draft(audit), percent=5, count=5)
    before = PipelineVersion.objects.filter(stash=audit).count()

    response = api(operator).post(url("audit", shadow.pk, "promote"))

    assert response.status_code == 200, response.json()
    audit.refresh_from_db()
    assert PipelineVersion.objects.filter(stash=audit).count() == before + 1
    assert response.json()["plan"]["version"] == audit.config_version
    assert response.json()["shadow"]["status"] == "promoted"
    assert PipelineVersion.objects.get(stash=audit, number=audit.config_version).created_by == operator
    assert api(operator).post(url("audit", shadow.pk, "promote")).status_code == 409


def test_promote_that_breaks_a_golden_example_is_refused_with_it(api, audit, operator):
    Example.objects.create(stash=audit, name="eggs pass", payload={"text": "eggs"}, verdict="accepted")
    shadow = processing.start_shadow(audit, document=draft(audit), percent=5, count=5)

    response = api(operator).post(url("audit", shadow.pk, "promote"))

    assert response.status_code == 409
    assert [example["name"] for example in response.json()["examples"]] == ["eggs pass"]
    assert Shadow.objects.get(pk=shadow.pk).status == "running"


def test_a_document_over_the_limit_is_a_413(api, audit, operator, settings):
    settings.STASH_MAX_DOCUMENT_BYTES = 200

    response = api(operator).post(url(), {"document": draft(audit), "percent": 5, "count": 5}, format="json")

    assert response.status_code == 413 and "STASH_MAX_DOCUMENT_BYTES" in response.json()["detail"]
    assert not Shadow.objects.exists()
