"""/api/stashes/: the stashes you may submit to; /simulate/: a verdict and trail, nothing saved."""
import pytest

from stash.models import Content, HookConfig, PipelineRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def stashes(audit, make_stash):
    return {"audit": audit, "open": make_stash("open", allow_anonymous=True),
            "closed": make_stash("closed", is_active=False, allow_anonymous=True)}


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
    assert body == {"slug": "audit", "name": "Audit", "description": "", "is_active": True, "allow_anonymous": False,
                    "on_error": "reject", "max_payload_bytes": 1024 * 1024,
                    "config_version": stashes["audit"].config_version, "queue_head": 0,
                    "queue": "", "effective_queue": settings.STASH_QUEUE}


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
    assert (body["verdict"], body["reason"], body["code"]) == ("rejected", "contains blocked word 'spam' in text",
                                                               "blocked_word")
    assert body["decided_by"] == audit.hooks.get(hook="keyword_blocklist").pk
    assert [(step["hook"], step["outcome"]) for step in body["trail"]] == [("require_fields", "kept"),
                                                                           ("keyword_blocklist", "dropped")]
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
