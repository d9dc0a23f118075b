"""The statement of reasons in the API: on a rejected or held item's detail (``statement``, null
otherwise), and ``GET /api/statements/`` for staff, in cursor pages, by stash and date."""

import pytest

from ..support.statements import judged, moderated_stash

pytestmark = pytest.mark.django_db


@pytest.fixture
def moderated(make_stash, register_temporarily, broker):
    return moderated_stash(make_stash, register_temporarily, appeal_days=7)


def test_a_rejected_items_detail_carries_its_statement(moderated, api, viewer):
    item = judged(moderated, text="spam")
    body = api(viewer).get(f"/api/contents/{item.pk}/").json()
    statement = body["statement"]
    assert set(statement) == {
        "text",
        "restriction",
        "facts",
        "automated_detection",
        "automated_decision",
        "ground",
        "ground_reference",
        "category",
        "decided_at",
        "appeal_until",
    }
    assert statement["text"] == "Your removed post used a word we do not allow in text."
    assert (statement["restriction"], statement["ground"], statement["automated_decision"]) == (
        "removed",
        "terms",
        True,
    )
    assert statement["facts"]["field"] == "text"
    assert statement["appeal_until"] is not None


def test_an_accepted_items_statement_is_null(moderated, api, viewer):
    item = judged(moderated, text="fine")
    assert api(viewer).get(f"/api/contents/{item.pk}/").json()["statement"] is None


def test_staff_list_statements_by_stash_and_date_in_cursor_pages(
    moderated, make_stash, api, make_user, register_temporarily
):
    for n in range(3):
        judged(moderated, text=f"spam {n}")
    other = make_stash("other", hooks=[("regex", {"field": "n", "pattern": "^a"})])
    judged(other, n="b")
    staff = make_user("stella", is_staff=True)
    first = api(staff).get("/api/statements/", {"stash": "moderated", "page_size": 2}).json()
    assert [row["reason_code"] for row in first["results"]] == ["blocked_word", "blocked_word"]
    second = api(staff).get(first["next"]).json()
    assert len(second["results"]) == 1 and second["next"] is None
    assert len(api(staff).get("/api/statements/").json()["results"]) == 4
    assert api(staff).get("/api/statements/", {"since": "2999-01-01"}).json()["results"] == []


def test_the_statement_list_is_for_staff_only(moderated, api, viewer):
    assert api().get("/api/statements/").status_code == 401
    assert api(viewer).get("/api/statements/").status_code == 403


@pytest.mark.parametrize(("params", "field"), [({"stash": "nope"}, "stash"), ({"since": "soon"}, "since")])
def test_a_bad_filter_is_a_400_naming_it(api, make_user, params, field):
    response = api(make_user("stella", is_staff=True)).get("/api/statements/", params)
    assert response.status_code == 400
    assert field in response.json()


@pytest.mark.parametrize(
    ("since", "count"),
    [
        ("0481-05-21T20:36:15+16:16", 1),  # an offset PostgreSQL cannot store: read in UTC
        ("2999-01-01T00:00:00-15:00", 0),
        ("2000-01-01", 1),
    ],
)
def test_since_is_read_in_utc_whatever_its_offset(moderated, api, make_user, since, count):
    judged(moderated, text="spam")
    response = api(make_user("stella", is_staff=True)).get("/api/statements/", {"since": since})
    assert response.status_code == 200
    assert len(response.json()["results"]) == count


def test_a_since_outside_the_years_a_date_holds_is_a_400(api, make_user):
    response = api(make_user("stella", is_staff=True)).get("/api/statements/", {"since": "0001-01-01T00:00:00+05:00"})
    assert response.status_code == 400
    assert "since" in response.json()
