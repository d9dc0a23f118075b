"""/api/stashes/: the stashes you may submit to; /simulate/: a verdict and trail, nothing saved."""

import pytest

from stash.models import Content, HookConfig, PipelineRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def stashes(audit, make_stash):
    return {
        "audit": audit,
        "open": make_stash("open", allow_anonymous=True),
        "closed": make_stash("closed", is_active=False, allow_anonymous=True),
    }


def slugs(response):
    assert response.status_code == 200, response.content
    return [stash["slug"] for stash in response.json()]


def test_a_submitter_lists_the_active_stashes(api, stashes, submitter):
    assert slugs(api(submitter).get("/api/stashes/")) == ["audit", "open"]


def test_anonymous_callers_list_the_stashes_that_take_them(api, stashes):
    assert slugs(api().get("/api/stashes/")) == ["open"]


def test_the_view_permission_lists_every_stash(api, stashes, make_user):
    assert slugs(api(make_user("vic", "stash.view_stash")).get("/api/stashes/")) == ["audit", "closed", "open"]


def test_a_stash_reads_with_its_settings(api, stashes, submitter, settings):
    body = api(submitter).get("/api/stashes/audit/").json()
    assert body == {
        "slug": "audit",
        "name": "Audit",
        "description": "",
        "is_active": True,
        "allow_anonymous": False,
        "on_error": "reject",
        "max_payload_bytes": 1024 * 1024,
        "max_waiting": None,
        "config_version": stashes["audit"].config_version,
        "queue_head": 0,
        "queue": "",
        "effective_queue": settings.STASH_QUEUE,
    }


def test_a_stash_you_may_not_submit_to_is_not_found(api, stashes):
    response = api().get("/api/stashes/audit/")
    assert response.status_code == 404
    assert response.json() == {"detail": "No Stash matches the given query."}


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_stashes_are_managed_in_the_admin_not_the_api(api, stashes, make_user, method):
    client = api(make_user("root", is_superuser=True))
    assert getattr(client, method)("/api/stashes/audit/", {}, format="json").status_code == 405


# --- simulate --------------------------------------------------------------------------------


@pytest.fixture
def tester(make_user):
    return make_user("tess", "stash.view_hookconfig")


def simulate(client, payload, slug="audit"):
    return client.post(f"/api/stashes/{slug}/simulate/", {"payload": payload}, format="json")


def test_simulate_answers_the_verdict_and_trail_and_saves_nothing(api, audit, tester):
    counters_before = list(HookConfig.objects.values_list("runs_count", flat=True))
    response = simulate(api(tester), {"text": "buy spam"})

    assert response.status_code == 200
    body = response.json()
    assert (body["verdict"], body["reason"], body["code"]) == (
        "rejected",
        "contains blocked word 'spam' in text",
        "blocked_word",
    )
    assert body["decided_by"] == audit.hooks.get(hook="keyword_blocklist").pk
    assert [(step["hook"], step["outcome"]) for step in body["trail"]] == [
        ("require_fields", "kept"),
        ("keyword_blocklist", "dropped"),
    ]
    assert (body["transformed"], body["payload"]) == (False, {"text": "buy spam"})
    assert not Content.objects.exists() and not PipelineRun.objects.exists()
    assert list(HookConfig.objects.values_list("runs_count", flat=True)) == counters_before


def test_simulate_accepts_a_clean_payload(api, audit, tester):
    body = simulate(api(tester), {"text": "hello"}).json()
    assert (body["verdict"], body["reason"], body["decided_by"]) == ("accepted", "", None)


def test_simulate_needs_the_permission_to_view_hooks(api, audit, submitter):
    assert simulate(api(), {"text": "hi"}).status_code == 401
    response = simulate(api(submitter), {"text": "hi"})
    assert response.status_code == 403
    assert response.json() == {"detail": "Simulating needs the permission to view hook configs."}


def test_simulate_checks_the_payload(api, make_stash, tester):
    make_stash("small", max_payload_bytes=20)
    client = api(tester)
    bad = simulate(client, "text", slug="small")
    assert (bad.status_code, bad.json()) == (400, {"payload": ["The payload must be a JSON object, not a string."]})
    big = simulate(client, {"text": "x" * 30}, slug="small")
    assert (big.status_code, big.json()) == (413, {"detail": "The payload is 41 bytes; this stash takes at most 20."})
    assert simulate(client, {}, slug="nowhere").status_code == 404


# --- simulate: verbose, and on an existing item --------------------------------------------------


@pytest.fixture
def shouting(make_stash, register_temporarily):
    """A stash whose transform upper-cases the text between two filters."""
    from stash import hooks

    class Shout(hooks.Transform):
        """Upper-case the text."""

        def transform(self, item):
            return {**item.payload, "text": item.payload["text"].upper()}

    register_temporarily("test_shout", Shout)
    return make_stash(
        "shouting",
        hooks=[
            ("keyword_blocklist", {"words": ["spam"]}),
            ("test_shout", {}),
            ("require_fields", {"fields": ["title"]}),
        ],
    )


@pytest.mark.parametrize("how", ["body", "query"])
def test_verbose_simulate_runs_every_hook_and_shows_the_payload_after_each_transform(api, shouting, tester, how):
    body = {"payload": {"text": "buy spam"}, **({"verbose": True} if how == "body" else {})}
    url = "/api/stashes/shouting/simulate/" + ("?verbose=1" if how == "query" else "")
    response = api(tester).post(url, body, format="json")

    assert response.status_code == 200, response.content
    result = response.json()
    assert result["verbose"] is True
    assert [(e["hook"], e["outcome"], e["stopped"], e["after_stop"], e["payload"]) for e in result["trail"]] == [
        ("keyword_blocklist", "dropped", True, False, None),
        ("test_shout", "transformed", False, True, {"text": "BUY SPAM"}),
        ("require_fields", "dropped", False, True, None),
    ]
    # The verdict is a normal run's: the first drop decides, on the payload as it was then.
    assert (result["verdict"], result["reason"], result["payload"]) == (
        "rejected",
        "contains blocked word 'spam' in text",
        {"text": "buy spam"},
    )
    assert result["decided_by"] == shouting.hooks.get(hook="keyword_blocklist").pk
    assert not Content.objects.exists() and not PipelineRun.objects.exists()


def test_simulate_without_verbose_stops_at_the_first_drop(api, shouting, tester):
    result = simulate(api(tester), {"text": "buy spam"}, slug="shouting").json()
    assert result["verbose"] is False
    assert [e["hook"] for e in result["trail"]] == ["keyword_blocklist"]
    assert "stopped" not in result["trail"][0]


def test_simulate_refuses_a_verbose_that_is_not_a_boolean(api, audit, tester):
    response = api(tester).post(
        "/api/stashes/audit/simulate/?verbose=maybe", {"payload": {"text": "hi"}}, format="json"
    )
    assert (response.status_code, response.json()) == (400, {"verbose": ["Must be a valid boolean."]})


def test_simulate_runs_on_the_payload_an_existing_item_was_submitted_with(api, audit, tester, make_user):
    item = Content.objects.create(stash=audit, payload={"text": "first"})
    # As a transform would leave it: simulate runs on what was submitted, not on the transform's output.
    Content.objects.filter(pk=item.pk).update(original_payload={"text": "now spam"}, payload={"text": "now ****"})
    reader = make_user("rita", "stash.view_hookconfig", "stash.view_content")
    runs, statuses = PipelineRun.objects.count(), list(Content.objects.values_list("status", flat=True))

    response = api(reader).post(
        "/api/stashes/audit/simulate/", {"content_id": str(item.pk), "verbose": True}, format="json"
    )

    assert response.status_code == 200, response.content
    result = response.json()
    assert (result["verdict"], result["payload"]) == ("rejected", {"text": "now spam"})
    assert PipelineRun.objects.count() == runs and list(Content.objects.values_list("status", flat=True)) == statuses


def test_simulate_refuses_an_item_of_another_stash_or_unknown_or_unreadable(api, audit, make_stash, make_user, tester):
    other = Content.objects.create(stash=make_stash("other"), payload={"text": "elsewhere"})
    mine = Content.objects.create(stash=audit, payload={"text": "hi"})
    reader = api(make_user("rita", "stash.view_hookconfig", "stash.view_content"))

    def refused(client, content_id):
        response = client.post("/api/stashes/audit/simulate/", {"content_id": content_id}, format="json")
        assert response.status_code == 400, response.content
        return response.json()

    assert refused(reader, str(other.pk)) == {
        "content_id": [f"Item {other.pk} belongs to the stash other, not to audit."]
    }
    unknown = "00000000-0000-4000-8000-000000000000"
    assert refused(reader, unknown) == {"content_id": [f"There is no item {unknown}."]}
    assert refused(reader, "nope") == {"content_id": ["Must be a valid UUID."]}
    # Without the permission to read items, another's item is as good as unknown.
    assert refused(api(tester), str(mine.pk)) == {"content_id": [f"There is no item {mine.pk}."]}


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "Give a payload or a content_id."),
        (
            {"payload": {"text": "hi"}, "content_id": "00000000-0000-4000-8000-000000000000"},
            "Give a payload or a content_id, not both.",
        ),
    ],
)
def test_simulate_needs_a_payload_or_an_item_not_both(api, audit, tester, body, message):
    response = api(tester).post("/api/stashes/audit/simulate/", body, format="json")
    assert (response.status_code, response.json()) == (400, {"non_field_errors": [message]})
