"""/api/failures/: the failure store's groups, filtered by stash and time; a group; its re-drive."""

from datetime import timedelta

import pytest
from django.utils import timezone

from stash import processing
from stash.models import Content, Failure

from ..support.fussy_hook import FIXED, Fussy, judged_fussy_stash

pytestmark = pytest.mark.django_db


@pytest.fixture
def fussy(make_stash, register_temporarily):
    yield judged_fussy_stash(make_stash, register_temporarily, colours=3, plain=1)
    FIXED.clear()


@pytest.fixture
def reader(api, make_user):
    return api(make_user("rita", "stash.view_content"))


@pytest.fixture
def operator(api, make_user):
    return api(make_user("otto", "stash.view_content", "stash.change_content"))


def test_the_list_has_one_group_with_its_counts_and_latest_failure(fussy, reader):
    response = reader.get("/api/failures/")
    assert response.status_code == 200
    (group,) = response.json()
    assert {k: group[k] for k in ("stash", "hook", "label", "kind", "error_type", "count", "items")} == {
        "stash": "fussy",
        "hook": "test_fussy",
        "label": "Fussy",
        "kind": "error",
        "error_type": "ValueError",
        "count": 3,
        "items": 3,
    }
    assert group["config_version"] == fussy.config_version and group["redriven_at"] is None
    assert group["example"]["message"] == "Fussy: ValueError: unknown colour"


def test_the_list_filters_by_stash(fussy, reader, make_stash):
    make_stash("calm")
    assert len(reader.get("/api/failures/", {"stash": "fussy"}).json()) == 1
    assert reader.get("/api/failures/", {"stash": "calm"}).json() == []
    response = reader.get("/api/failures/", {"stash": "nowhere"})
    assert response.status_code == 400 and "stash" in response.json()


def test_the_list_filters_by_time(fussy, reader):
    Failure.objects.filter(pk=Failure.objects.order_by("pk").first().pk).update(at=timezone.now() - timedelta(days=2))
    day_ago = (timezone.now() - timedelta(days=1)).isoformat()
    assert [g["count"] for g in reader.get("/api/failures/", {"since": day_ago}).json()] == [2]
    assert [g["count"] for g in reader.get("/api/failures/", {"until": day_ago}).json()] == [1]
    bad = reader.get("/api/failures/", {"since": "yesterday"})
    assert bad.status_code == 400 and "since" in bad.json()
    backwards = reader.get("/api/failures/", {"since": day_ago, "until": "2000-01-01T00:00:00Z"})
    assert backwards.status_code == 400
    assert backwards.json()["until"] == ["“Until” must not come before “since”."]


def test_a_group_shows_its_trail(fussy, reader):
    key = reader.get("/api/failures/").json()[0]["key"]
    body = reader.get(f"/api/failures/{key}/").json()
    assert [entry["outcome"] for entry in body["trail"]] == ["error"]
    assert body["outcome"] == {}
    assert reader.get("/api/failures/0000000000000000/").status_code == 404


def test_a_redrive_after_the_fix_accepts_the_group(fussy, operator):
    key = operator.get("/api/failures/").json()[0]["key"]
    FIXED.add(Fussy)

    response = operator.post(f"/api/failures/{key}/redrive/")
    assert response.status_code == 202
    assert response.json()["sent"] == 3 and response.json()["left_out"] == 0

    processing.judge(list(processing.failures.items_of(key).values_list("pk", flat=True)))
    assert operator.get(f"/api/failures/{key}/").json()["outcome"] == {
        "waiting": 0,
        "accepted": 3,
        "rejected": 0,
        "held": 0,
        "still_failing": 0,
    }


def test_reading_needs_view_content_and_redriving_change_content(fussy, reader, api, make_user):
    assert api(make_user("nobody")).get("/api/failures/").status_code == 403
    assert api().get("/api/failures/").status_code == 401
    key = reader.get("/api/failures/").json()[0]["key"]
    assert reader.post(f"/api/failures/{key}/redrive/").status_code == 403
    assert not Content.objects.filter(status="pending").exists()
