"""/api/stashes/<slug>/pipeline/ (the pipeline document), versions/ (list, read, compare, restore),
examples/ (golden examples: CRUD, run) and /api/contents/<id>/example/."""

import pytest

from stash import processing
from stash.models import Content, Example, HookConfig, PipelineVersion, Stash

pytestmark = pytest.mark.django_db

PIPELINE = "/api/stashes/audit/pipeline/"
VERSIONS = "/api/stashes/audit/versions/"
EXAMPLES = "/api/stashes/audit/examples/"
SECRET = "s3cret-s3cret-s3cret"
HOOK_PERMS = ("stash.view_hookconfig", "stash.add_hookconfig", "stash.change_hookconfig", "stash.delete_hookconfig")
EXAMPLE_PERMS = ("stash.view_example", "stash.add_example", "stash.change_example", "stash.delete_example")


@pytest.fixture
def owner(make_user):
    """May do everything with pipelines and examples."""
    return make_user("olga", "stash.change_stash", *HOOK_PERMS, *EXAMPLE_PERMS)


@pytest.fixture
def client(api, owner):
    return api(owner)


def version(slug="audit"):
    return Stash.objects.get(slug=slug).config_version


def versions(slug="audit"):
    return PipelineVersion.objects.filter(stash__slug=slug).count()


def spam_example(stash, **fields):
    return Example.objects.create(stash=stash, name="spam", payload={"text": "buy spam"}, verdict="rejected", **fields)


def without_slug(document):
    return {**document, "stash": {key: value for key, value in document["stash"].items() if key != "slug"}}


# --- the document ----------------------------------------------------------------------------


def test_the_document_lists_settings_hooks_in_order_and_examples(client, audit):
    spam_example(audit, reason_code="blocked_word")
    document = client.get(PIPELINE).json()
    assert (document["format"], document["format_version"], document["stash"]["slug"]) == ("stash.pipeline", 1, "audit")
    assert [(hook["hook"], hook["position"], hook["params"]) for hook in document["hooks"]] == [
        ("require_fields", 1, {"fields": ["text"]}),
        ("keyword_blocklist", 2, {"words": ["spam"]}),
    ]
    assert "id" not in document["hooks"][0]
    assert document["examples"] == [
        {
            "name": "spam",
            "payload": {"text": "buy spam"},
            "verdict": "rejected",
            "reason_code": "blocked_word",
            "hook": "",
            "service_answers": {},
        }
    ]


def test_a_document_put_into_another_stash_reads_back_the_same(client, audit, make_stash):
    HookConfig.objects.create(
        stash=audit,
        hook="max_size",
        label="Small",
        params={"max_bytes": 500},
        mode="observe",
        condition="has(payload.text)",
        timeout_ms=300,
        on_error="skip",
    )
    spam_example(audit)
    make_stash("copy", hooks=[("max_size", {"max_bytes": 1})])
    document = client.get(PIPELINE).json()

    response = client.put("/api/stashes/copy/pipeline/", document, format="json")
    assert response.status_code == 200
    plan = response.json()
    assert (plan["stash"], plan["created"], plan["applied"], plan["version"]) == ("copy", False, True, version("copy"))
    assert "added require_fields" in plan["changes"]
    assert [(result["name"], result["passed"]) for result in plan["examples"]] == [("spam", True)]
    copied = client.get("/api/stashes/copy/pipeline/").json()
    assert copied["stash"]["slug"] == "copy"
    assert without_slug(copied) == without_slug(document)


def test_a_document_with_one_bad_hook_is_refused_naming_its_index_and_field_and_nothing_changes(client, audit):
    document = client.get(PIPELINE).json()
    document["hooks"][0]["label"] = "Needs text"
    document["hooks"][1]["params"] = {"words": "spam"}
    before, count = version(), versions()

    response = client.put(PIPELINE, document, format="json")
    assert response.status_code == 400
    [message] = response.json()["hooks"]["1"]["params"]
    assert message.startswith("keyword_blocklist (keyword_blocklist): Invalid params")
    assert "Must be a list." in message
    assert (version(), versions()) == (before, count)
    assert list(audit.hooks.values_list("label", flat=True)) == ["", ""]


@pytest.mark.parametrize(
    "document, field",
    [
        ([], "document"),
        ({"format": "other", "format_version": 1, "hooks": []}, "format"),
        ({"format": "stash.pipeline", "format_version": True, "hooks": []}, "format_version"),
        (
            {"format": "stash.pipeline", "format_version": 1, "hooks": [{"hook": "max_size", "label": "a\x00b"}]},
            "document",
        ),
    ],
)
def test_a_malformed_document_is_a_400_naming_the_field(client, audit, document, field):
    before = version()
    response = client.put(PIPELINE, document, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert version() == before


def test_faults_of_the_hooks_list_and_of_one_hook_are_told_apart(client, audit):
    document = client.get(PIPELINE).json()
    document["hooks"][1].update(position=1, label=5, **{"": "unknown"})
    body = client.put(PIPELINE, document, format="json").json()
    assert body["hooks"]["non_field_errors"] == ["Two hooks have the same position."]
    assert body["hooks"]["1"]["label"] == ["hooks[1] (5): must be a string."]
    assert body["hooks"]["1"][""] == ["hooks[1] (5): unknown field."]


def test_a_dry_run_says_what_would_change_and_changes_nothing(client, audit):
    document = client.get(PIPELINE).json()
    document["hooks"].pop(0)
    before, count = version(), versions()
    response = client.put(f"{PIPELINE}?dry_run=1", document, format="json")
    assert response.status_code == 200
    assert response.json() == {
        "stash": "audit",
        "created": False,
        "changes": ["removed require_fields"],
        "applied": False,
        "version": None,
        "examples": [],
    }
    assert (version(), versions(), audit.hooks.count()) == (before, count, 2)


def test_dry_run_must_be_a_boolean(client, audit):
    response = client.put(f"{PIPELINE}?dry_run=maybe", client.get(PIPELINE).json(), format="json")
    assert response.status_code == 400
    assert "dry_run" in response.json()


def test_a_put_to_an_unknown_stash_is_a_404_and_creates_nothing(client, audit):
    document = client.get(PIPELINE).json()
    assert client.put("/api/stashes/nope/pipeline/", document, format="json").status_code == 404
    assert not Stash.objects.filter(slug="nope").exists()


def test_a_change_that_breaks_an_example_is_refused_with_the_broken_ones(client, audit):
    spam_example(audit)
    Example.objects.create(stash=audit, name="plain", payload={"text": "hi"}, verdict="accepted")
    document = client.get(PIPELINE).json()
    document["hooks"].pop(1)
    before, count = version(), versions()

    response = client.put(PIPELINE, document, format="json")
    assert response.status_code == 409
    body = response.json()
    assert "breaks 1 golden example" in body["detail"]
    assert [(result["name"], result["passed"], result["problems"]) for result in body["examples"]] == [
        ("spam", False, ["expected rejected, got accepted"])
    ]
    assert (version(), versions(), audit.hooks.count()) == (before, count, 2)


def test_a_stash_that_warns_takes_the_change_and_the_answer_shows_the_failure(client, audit):
    Stash.objects.filter(pk=audit.pk).update(examples_policy="warn")
    spam_example(audit)
    document = client.get(PIPELINE).json()
    document["hooks"].pop(1)
    body = client.put(PIPELINE, document, format="json").json()
    assert body["applied"] is True
    assert [(result["name"], result["passed"]) for result in body["examples"]] == [("spam", False)]
    assert audit.hooks.count() == 1


def test_an_import_is_a_version_by_its_author(client, audit):
    document = client.get(PIPELINE).json()
    document["hooks"][1]["params"] = {"words": ["spam", "scam"]}
    number = client.put(PIPELINE, document, format="json").json()["version"]
    latest = client.get(VERSIONS).json()["results"][0]
    assert (latest["number"], latest["created_by"]) == (number, "olga")
    assert latest["summary"] == 'import: keyword_blocklist: words ["spam"] → ["spam", "scam"]'


# --- versions --------------------------------------------------------------------------------


@pytest.fixture
def changed(audit):
    """audit at three more versions: a label, a removed hook, a webhook with a secret."""
    first = audit.hooks.in_order().first()
    first.label = "Needs text"
    first.save()
    audit.hooks.get(hook="keyword_blocklist").delete()
    HookConfig.objects.create(stash=audit, hook="webhook", params={"url": "https://example.com/in", "secret": SECRET})
    return version()


def test_versions_list_newest_first_in_pages(client, changed):
    body = client.get(f"{VERSIONS}?page_size=2").json()
    assert [row["number"] for row in body["results"]] == [changed, changed - 1]
    assert body["results"][0]["summary"] == "added webhook"
    assert set(body["results"][0]) == {"number", "created_at", "created_by", "summary"}
    rest = client.get(body["next"]).json()
    assert [row["number"] for row in rest["results"]] == [changed - 2, changed - 3]


def test_a_version_shows_its_document_without_secrets(client, changed):
    response = client.get(f"{VERSIONS}{changed}/")
    assert response.status_code == 200
    body = response.json()
    assert body["number"] == changed
    assert [hook["hook"] for hook in body["document"]["hooks"]] == ["require_fields", "webhook"]
    assert body["document"]["hooks"][1]["params"] == {"url": "https://example.com/in"}
    assert "id" not in body["document"]["hooks"][0]
    assert SECRET not in response.content.decode()
    assert SECRET in str(PipelineVersion.objects.get(stash__slug="audit", number=changed).document)
    assert client.get(f"{VERSIONS}999/").status_code == 404


def test_two_versions_compare_as_phrases_and_a_diff(client, changed):
    body = client.get(f"{VERSIONS}diff/?from={changed - 3}&to={changed - 1}").json()
    assert body["from"] == changed - 3 and body["to"] == changed - 1
    assert body["changes"] == ["removed keyword_blocklist", 'Needs text: label "" → "Needs text"']
    assert '-      "label": "",' in body["diff"] and '+      "label": "Needs text",' in body["diff"]
    assert SECRET not in client.get(f"{VERSIONS}diff/?from=1&to={changed}").content.decode()


@pytest.mark.parametrize(
    "query, field, message",
    [
        ("from=1", "to", "This field is required."),
        ("from=x&to=1", "from", "A valid integer is required."),
        ("from=1&to=99", "to", "audit has no version 99."),
        ("from=0&to=1", "from", "Ensure this value is greater than or equal to 1."),
    ],
)
def test_a_bad_diff_parameter_is_a_400_naming_it(client, changed, query, field, message):
    response = client.get(f"{VERSIONS}diff/?{query}")
    assert response.status_code == 400
    assert response.json() == {field: [message]}


def test_restoring_a_version_makes_a_new_one_with_its_hooks(client, changed):
    old = changed - 2  # the label changed, both filters still there
    response = client.post(f"{VERSIONS}{old}/restore/")
    assert response.status_code == 200
    plan = response.json()
    assert plan["applied"] is True and plan["version"] == changed + 1 == version()
    assert "removed webhook" in plan["changes"] and "added keyword_blocklist" in plan["changes"]
    restored = client.get(f"{VERSIONS}{old}/").json()["document"]["hooks"]
    now = client.get(f"{VERSIONS}{changed + 1}/").json()["document"]["hooks"]
    assert now == restored
    assert client.get(f"{VERSIONS}{changed + 1}/").json()["summary"].startswith(f"restore of version {old}:")


def test_restoring_an_unknown_version_is_a_404(client, changed):
    assert client.post(f"{VERSIONS}999/restore/").status_code == 404
    assert version() == changed


def test_a_restore_that_breaks_an_example_is_refused(client, changed, audit):
    Example.objects.create(stash=audit, name="spam is fine", payload={"text": "spam"}, verdict="accepted")
    response = client.post(f"{VERSIONS}{changed - 2}/restore/")  # with keyword_blocklist again
    assert response.status_code == 409
    assert [result["name"] for result in response.json()["examples"]] == ["spam is fine"]
    assert version() == changed
    assert list(audit.hooks.values_list("hook", flat=True)) == ["require_fields", "webhook"]


def test_a_runs_config_version_names_the_version_that_judged_it(client, api, audit, make_user):
    content = processing.submit(audit, {"text": "hello"})[0]
    processing.judge([content.pk])
    run = api(make_user("vic", "stash.view_content")).get(f"/api/contents/{content.pk}/").json()["run"]
    assert run["config_version"] == version()
    judged = client.get(f"{VERSIONS}{run['config_version']}/").json()["document"]["hooks"]
    assert [hook["hook"] for hook in judged] == ["require_fields", "keyword_blocklist"]


# --- golden examples -------------------------------------------------------------------------


def test_examples_are_added_read_changed_and_removed(client, audit, owner):
    response = client.post(
        EXAMPLES,
        {"name": "spam", "payload": {"text": "spam"}, "verdict": "rejected", "reason_code": "blocked_word"},
        format="json",
    )
    assert response.status_code == 201
    created = response.json()
    assert (created["name"], created["created_by"], created["content"], created["hook"]) == ("spam", "olga", None, "")
    url = f"{EXAMPLES}{created['id']}/"
    assert client.get(EXAMPLES).json() == [client.get(url).json()]

    assert client.patch(url, {"hook": "keyword_blocklist"}, format="json").json()["hook"] == "keyword_blocklist"
    replaced = client.put(url, {"name": "ham", "payload": {"text": "ham"}, "verdict": "accepted"}, format="json")
    assert replaced.status_code == 200
    assert (replaced.json()["name"], replaced.json()["verdict"], replaced.json()["reason_code"]) == (
        "ham",
        "accepted",
        "blocked_word",
    )
    assert client.delete(url).status_code == 204
    assert client.get(url).status_code == 404
    assert not Example.objects.exists()


@pytest.mark.parametrize(
    "body, field, message",
    [
        (
            {"name": "spam", "payload": {"text": "x"}, "verdict": "accepted"},
            "name",
            "This stash already has an example named 'spam'.",
        ),
        (
            {"name": "x", "payload": [1], "verdict": "accepted"},
            "payload",
            "The payload must be a JSON object, not an array.",
        ),
        ({"name": "x", "payload": {"text": "x"}, "verdict": "maybe"}, "verdict", '"maybe" is not a valid choice.'),
        ({"name": 5, "payload": {"text": "x"}, "verdict": "accepted"}, "name", "Not a valid string."),
    ],
)
def test_a_bad_example_is_a_400_naming_the_field(client, audit, body, field, message):
    spam_example(audit)
    response = client.post(EXAMPLES, body, format="json")
    assert response.status_code == 400
    assert response.json() == {field: [message]}
    assert Example.objects.count() == 1


def test_an_example_payload_over_the_stash_limit_is_a_413(client, audit):
    Stash.objects.filter(pk=audit.pk).update(max_payload_bytes=10)
    response = client.post(
        EXAMPLES, {"name": "big", "payload": {"text": "more than ten"}, "verdict": "accepted"}, format="json"
    )
    assert response.status_code == 413
    assert not Example.objects.exists()


def test_running_the_examples_says_which_pass(client, audit):
    spam_example(audit)
    Example.objects.create(stash=audit, name="wrong", payload={"text": "hi"}, verdict="held")
    response = client.post(f"{EXAMPLES}run/")
    assert response.status_code == 200
    body = response.json()
    assert body["passed"] is False
    assert [(result["name"], result["passed"], result["problems"]) for result in body["results"]] == [
        ("spam", True, []),
        ("wrong", False, ["expected held, got accepted"]),
    ]
    Example.objects.filter(name="wrong").update(verdict="accepted")
    assert client.post(f"{EXAMPLES}run/").json()["passed"] is True


def broken_names(response):
    return [(result["name"], result["problems"]) for result in response.json()["examples"]]


def test_hook_changes_through_the_api_that_break_an_example_are_refused(client, audit):
    spam_example(audit)
    Example.objects.create(stash=audit, name="plain", payload={"text": "hi"}, verdict="accepted")
    require, blocklist = audit.hooks.in_order()
    before, count = version(), versions()
    hooks = "/api/stashes/audit/hooks/"
    answers = [
        client.patch(f"{hooks}{blocklist.pk}/", {"enabled": False}, format="json"),
        client.delete(f"{hooks}{blocklist.pk}/"),
        client.post(hooks, {"hook": "keyword_blocklist", "params": {"words": ["hi"]}}, format="json"),
    ]
    assert [response.status_code for response in answers] == [409, 409, 409]
    assert broken_names(answers[0]) == broken_names(answers[1]) == [("spam", ["expected rejected, got accepted"])]
    assert broken_names(answers[2]) == [("plain", ["expected accepted, got rejected"])]
    assert (version(), versions(), list(audit.hooks.in_order().values_list("pk", "enabled"))) == (
        before,
        count,
        [(require.pk, True), (blocklist.pk, True)],
    )

    # A reorder that changes which hook decides an example, too.
    Example.objects.create(
        stash=audit, name="no text", payload={"note": "spam"}, verdict="rejected", hook="require_fields"
    )
    response = client.post(
        f"{hooks}reorder/", {"order": [blocklist.pk, require.pk], "config_version": before}, format="json"
    )
    assert response.status_code == 409
    assert broken_names(response) == [("no text", ["expected 'require_fields' to decide, got 'keyword_blocklist'"])]
    assert list(audit.hooks.in_order().values_list("pk", flat=True)) == [require.pk, blocklist.pk]

    # Changes no example minds go through; so do breaking ones once the stash only warns.
    assert client.patch(f"{hooks}{blocklist.pk}/", {"label": "No spam"}, format="json").status_code == 200
    Stash.objects.filter(pk=audit.pk).update(examples_policy="warn")
    assert client.delete(f"{hooks}{blocklist.pk}/").status_code == 204
    assert audit.hooks.count() == 1


def test_an_item_with_a_verdict_becomes_an_example(client, audit, owner):
    content = processing.submit(audit, {"text": "cheap spam"}, owner)[0]
    pending = client.post(f"/api/contents/{content.pk}/example/")
    assert pending.status_code == 400
    assert "has no verdict yet" in pending.json()["non_field_errors"][0]
    processing.judge([content.pk])
    response = client.post(f"/api/contents/{content.pk}/example/")
    assert response.status_code == 201
    body = response.json()
    assert (body["payload"], body["verdict"], body["reason_code"], body["hook"], body["content"]) == (
        {"text": "cheap spam"},
        "rejected",
        "blocked_word",
        "keyword_blocklist",
        str(content.pk),
    )
    assert client.post(f"{EXAMPLES}run/").json()["passed"] is True
    assert client.get(f"{EXAMPLES}{body['id']}/").json() == body


# --- permissions -----------------------------------------------------------------------------


def test_reading_a_pipeline_and_its_versions_needs_the_permission_to_view_hooks(api, audit, make_user, submitter):
    for url in (PIPELINE, VERSIONS, f"{VERSIONS}1/", f"{VERSIONS}diff/?from=1&to=2"):
        response = api(submitter).get(url)
        assert response.status_code == 403, url
        assert response.json() == {"detail": "Reading a stash's pipeline needs the permission to view hook configs."}
    reader = api(make_user("rita", "stash.view_hookconfig"))
    assert reader.get(PIPELINE).status_code == 200
    assert reader.get(VERSIONS).status_code == 200
    assert api().get(PIPELINE).status_code == 401


def test_changing_a_pipeline_needs_the_permissions_to_manage_hooks_and_the_stash(api, audit, make_user):
    hooks_only = api(make_user("hank", *HOOK_PERMS))
    document = hooks_only.get(PIPELINE).json()
    document.pop("examples")
    document["stash"]["allow_anonymous"] = True
    before = version()
    for response in (hooks_only.put(PIPELINE, document, format="json"), hooks_only.post(f"{VERSIONS}1/restore/")):
        assert response.status_code == 403
        assert "needs the permissions to change stashes" in response.json()["detail"]
    assert version() == before and not Stash.objects.get(slug="audit").allow_anonymous
    # Nor does anyone learn which stashes exist.
    assert hooks_only.put("/api/stashes/nope/pipeline/", document, format="json").status_code == 403


def test_a_document_with_examples_needs_the_permissions_to_replace_them(api, audit, make_user):
    client = api(make_user("stan", "stash.change_stash", *HOOK_PERMS))
    document = client.get(PIPELINE).json()
    response = client.put(PIPELINE, document, format="json")
    assert response.status_code == 403
    assert "add and delete examples" in response.json()["detail"]
    document.pop("examples")
    assert client.put(PIPELINE, document, format="json").status_code == 200


def test_examples_follow_their_model_permissions(api, audit, make_user, submitter):
    example = spam_example(audit)
    outsider = api(submitter)
    assert outsider.get(EXAMPLES).status_code == 403
    assert outsider.post(f"{EXAMPLES}run/").status_code == 403
    assert outsider.delete(f"{EXAMPLES}{example.pk}/").status_code == 403
    content = Content.objects.create(stash=audit, payload={"text": "x"}, status="accepted")
    response = outsider.post(f"/api/contents/{content.pk}/example/")
    assert response.status_code == 403
    assert response.json() == {"detail": "Making an example needs the permission to add examples."}

    reader = api(make_user("rob", "stash.view_example"))
    assert reader.get(EXAMPLES).status_code == 200
    assert reader.post(f"{EXAMPLES}run/").status_code == 200
    assert reader.post(EXAMPLES, {"name": "x", "payload": {}, "verdict": "accepted"}, format="json").status_code == 403
    assert reader.delete(f"{EXAMPLES}{example.pk}/").status_code == 403
    assert Example.objects.count() == 1
