"""/api/contents/: submitting, listing, reading with the trail, editing, judging again."""

import pytest
from django.contrib.auth.models import Group, Permission
from rest_framework.renderers import JSONRenderer

from stash import processing
from stash.api.serializers import ContentSerializer, SubmitSerializer
from stash.models import Content

pytestmark = pytest.mark.django_db

URL = "/api/contents/"


def post(client, body, **extra):
    return client.post(URL, body, format="json", **extra)


def detail(content):
    return f"{URL}{content.pk}/"


# --- submitting ------------------------------------------------------------------------------


def test_a_submitter_posts_an_item_and_gets_it_back_pending_with_its_location(api, audit, submitter):
    response = post(api(submitter), {"stash": "audit", "payload": {"text": "hello"}})

    assert response.status_code == 201
    body = response.json()
    content = Content.objects.get()
    assert body["id"] == str(content.pk)
    assert response["Location"] == f"http://testserver{URL}{content.pk}/"
    assert (body["stash"], body["payload"], body["status"], body["revision"]) == (
        "audit",
        {"text": "hello"},
        "pending",
        1,
    )
    assert (body["source"], body["submitted_by"]) == ("api", "sam")
    assert (content.source, content.submitted_by, content.payload) == ("api", submitter, {"text": "hello"})


def test_a_posted_item_is_judged_by_the_stash_hooks(api, audit, submitter):
    ok = post(api(submitter), {"stash": "audit", "payload": {"text": "hello"}}).json()
    spam = post(api(submitter), {"stash": "audit", "payload": {"text": "spam"}}).json()
    processing.judge([ok["id"], spam["id"]])
    assert Content.objects.get(pk=ok["id"]).status == "accepted"
    spam_item = Content.objects.get(pk=spam["id"])
    assert (spam_item.status, spam_item.reason) == ("rejected", "contains blocked word 'spam' in text")


def test_anonymous_callers_are_told_to_authenticate(api, audit):
    response = post(api(), {"stash": "audit", "payload": {"text": "hi"}})
    assert response.status_code == 401
    assert response.json() == {"detail": "Authentication credentials were not provided."}
    assert response["WWW-Authenticate"] == "Token"
    assert not Content.objects.exists()


def test_a_user_without_the_add_permission_is_refused(api, audit, make_user):
    response = post(api(make_user("nobody")), {"stash": "audit", "payload": {"text": "hi"}})
    assert response.status_code == 403
    assert response.json() == {"detail": "You may not submit to this stash."}
    assert not Content.objects.exists()


def test_anyone_may_submit_to_a_stash_that_allows_anonymous_submissions(api, make_stash):
    make_stash("open", allow_anonymous=True)
    response = post(api(), {"stash": "open", "payload": {"text": "hi"}})
    assert response.status_code == 201
    assert response.json()["submitted_by"] is None
    assert Content.objects.get().submitted_by is None


def test_anonymous_submissions_are_throttled(api, make_stash, settings):
    settings.STASH_THROTTLE_RATES = {**settings.STASH_THROTTLE_RATES, "anon_submit": "2/minute"}
    make_stash("open", allow_anonymous=True)
    client = api()
    statuses = [post(client, {"stash": "open", "payload": {"n": n}}).status_code for n in range(3)]
    assert statuses == [201, 201, 429]
    response = post(client, {"stash": "open", "payload": {"n": 4}})
    assert response.json()["detail"].startswith("Request was throttled.")
    assert int(response["Retry-After"]) > 0
    assert Content.objects.count() == 2


def test_authenticated_submitters_are_not_throttled_as_anonymous(api, audit, submitter, settings):
    settings.STASH_THROTTLE_RATES = {**settings.STASH_THROTTLE_RATES, "anon_submit": "1/minute"}
    client = api(submitter)
    assert [post(client, {"stash": "audit", "payload": {"n": n}}).status_code for n in range(3)] == [201] * 3


@pytest.mark.parametrize(
    "body, field, message",
    [
        ({"stash": "audit", "payload": [1, 2]}, "payload", "The payload must be a JSON object, not an array."),
        ({"stash": "audit", "payload": "text"}, "payload", "The payload must be a JSON object, not a string."),
        ({"stash": "audit", "payload": None}, "payload", "This field may not be null."),
        ({"stash": "audit"}, "payload", "This field is required."),
        ({"stash": "nowhere", "payload": {}}, "stash", "There is no stash slug=nowhere."),
        ({"stash": "au\u0000dit", "payload": {}}, "stash", "There is no stash slug=au\u0000dit."),
        ({"stash": 5, "payload": {}}, "stash", "Give the slug of a stash, as a string."),
        ({"stash": ["audit"], "payload": {}}, "stash", "Give the slug of a stash, as a string."),
        ({"payload": {}}, "stash", "This field is required."),
        (
            {"stash": "audit", "payload": {"text": "a\u0000b"}},
            "payload",
            "The payload contains a NUL character (\\u0000), which cannot be stored.",
        ),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_nothing_is_saved(api, audit, submitter, body, field, message):
    response = post(api(submitter), body)
    assert response.status_code == 400
    assert response.json()[field] == [message]
    assert not Content.objects.exists()


def test_a_body_that_is_not_a_json_object_is_a_400(api, audit, submitter):
    response = post(api(submitter), [{"stash": "audit", "payload": {}}])
    assert response.status_code == 400
    assert response.json() == {"non_field_errors": ["Invalid data. Expected a dictionary, but got list."]}


@pytest.mark.parametrize(
    "raw, message",
    [
        ('{"stash": "audit", "payload": {', "JSON parse error"),
        ('{"stash": "audit", "payload": {"x": NaN}}', "JSON parse error"),
        ("[" * 100_000 + "]" * 100_000, "JSON parse error - the document is nested too deeply."),
    ],
)
def test_malformed_json_is_a_400_with_the_parse_error(api, audit, submitter, raw, message):
    response = api(submitter).post(URL, raw, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["detail"].startswith(message)
    assert not Content.objects.exists()


@pytest.mark.parametrize(
    "payload, message",
    [
        ('{"x": 1e999}', "The payload contains a number too large for JSON."),
        ('{"deep": ' + "[" * 120 + "]" * 120 + "}", "The payload nests deeper than 100 levels."),
        (
            '{"text": "\\ud800"}',
            "The payload contains an unpaired surrogate (\\ud800-\\udfff), which is not valid Unicode.",
        ),
    ],
)
def test_json_that_no_database_can_store_is_a_400(api, audit, submitter, payload, message):
    raw = '{"stash": "audit", "payload": %s}' % payload
    response = api(submitter).post(URL, raw, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"payload": [message]}
    assert not Content.objects.exists()


def test_an_inactive_stash_takes_no_submissions(api, make_stash, submitter):
    make_stash("closed", is_active=False)
    response = post(api(submitter), {"stash": "closed", "payload": {"text": "hi"}})
    assert response.status_code == 400
    assert response.json() == {"stash": ["The stash closed is inactive and takes no submissions."]}
    assert not Content.objects.exists()


def test_a_stash_closed_or_a_permission_revoked_counts_from_the_next_submission(api, audit, submitter):
    client = api(submitter)
    assert post(client, {"stash": "audit", "payload": {"n": 1}}).status_code == 201
    submitter.user_permissions.clear()
    assert post(client, {"stash": "audit", "payload": {"n": 2}}).status_code == 403
    submitter.user_permissions.add(Permission.objects.get(codename="add_content"))
    audit.is_active = False
    audit.save()
    assert post(client, {"stash": "audit", "payload": {"n": 3}}).status_code == 400
    assert Content.objects.count() == 1


def test_the_add_permission_may_come_through_a_group(api, audit, make_user):
    group = Group.objects.create(name="submitters")
    group.permissions.add(Permission.objects.get(codename="add_content"))
    member = make_user("gil")
    member.groups.add(group)
    assert post(api(member), {"stash": "audit", "payload": {"text": "hi"}}).status_code == 201
    group.permissions.clear()
    assert post(api(member), {"stash": "audit", "payload": {"text": "hi"}}).status_code == 403


def test_a_superuser_may_submit_without_the_permission(api, audit, django_user_model):
    root = django_user_model.objects.create_superuser("root", "root@example.com", "pass-word-123")
    assert post(api(root), {"stash": "audit", "payload": {"text": "hi"}}).status_code == 201


def test_other_authentication_backends_decide_by_has_perm(api, audit, submitter, make_user, settings):
    settings.AUTHENTICATION_BACKENDS = [
        "django.contrib.auth.backends.ModelBackend",
        "django.contrib.auth.backends.AllowAllUsersModelBackend",
    ]
    assert post(api(submitter), {"stash": "audit", "payload": {"text": "hi"}}).status_code == 201
    assert post(api(make_user("nobody")), {"stash": "audit", "payload": {"text": "hi"}}).status_code == 403


def test_the_answer_is_the_item_as_the_content_serializer_renders_it(api, audit, submitter):
    response = post(api(submitter), {"stash": "audit", "payload": {"text": "hello"}})
    content = Content.objects.select_related("stash", "submitted_by").get()
    assert response.content == JSONRenderer().render(ContentSerializer(content).data)


def test_a_submitted_item_edited_in_place_is_judged_again_and_saved_unchanged_is_not(audit, submitter):
    edited, _created = processing.submit(audit, {"text": "hi", "data": {"n": 1}}, submitter)
    edited.payload["data"]["n"] = 2
    edited.save()
    untouched, _created = processing.submit(audit, {"text": "hi"}, submitter)
    untouched.save()
    assert Content.objects.get(pk=edited.pk).revision == 2
    assert Content.objects.get(pk=untouched.pk).revision == 1


def test_a_submission_reads_the_fields_the_schema_documents():
    writable = {name for name, field in ContentSerializer().fields.items() if not field.read_only}
    assert set(SubmitSerializer().fields) == writable == {"stash", "payload"}


# Pinned: a query more is a regression. Tests run inside a transaction, so a keyed insert shows
# its savepoint (SAVEPOINT, INSERT, RELEASE); outside one it is the INSERT alone.
def test_a_submission_takes_three_queries(api, audit, submitter, django_assert_num_queries):
    client = api(submitter)
    with django_assert_num_queries(3):  # the token with its user; the stash with the permission; the insert
        response = post(client, {"stash": "audit", "payload": {"text": "hello"}})
    assert response.status_code == 201


def test_a_keyed_submission_takes_three_queries_and_a_savepoint(api, audit, submitter, django_assert_num_queries):
    client = api(submitter)
    with django_assert_num_queries(5):  # the stash query looks the key up too
        first = post(client, {"stash": "audit", "payload": {"text": "hello"}}, HTTP_IDEMPOTENCY_KEY="k")
    with django_assert_num_queries(3):  # the token; the stash, permission and key; the first item
        again = post(client, {"stash": "audit", "payload": {"text": "hello"}}, HTTP_IDEMPOTENCY_KEY="k")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()


# Pinned too: the cache's round trips of a submission (see ``stash.db.publishing``). Committed as it is
# served (a transaction test), so that each submission publishes, or joins a message, as it returns.
@pytest.mark.django_db(transaction=True)
def test_a_submission_takes_one_cache_round_trip_and_one_on_redis_to_join_a_waiting_message(
    api, audit, submitter, broker, cache_round_trips
):
    client = api(submitter)
    broker.held = True  # the first item's message waits in the queue: the next submission joins it
    with cache_round_trips() as first:
        assert post(client, {"stash": "audit", "payload": {"text": "first"}}).status_code == 201
    assert first.count == 1  # the stash's marker put up (it was down): this submission publishes
    with cache_round_trips() as second:
        assert post(client, {"stash": "audit", "payload": {"text": "second"}}).status_code == 201
    # The marker found up, and the note that a save joined: one script on Redis; on the file cache
    # the look, the note, and a second look at the marker, three calls.
    assert second.count == (1 if second.redis else 3)
    assert len(broker.messages) == 1
    message = broker.messages[0]
    assert processing.judge(*message["args"], **message["kwargs"]).judged == 2
    assert not Content.objects.filter(status="pending").exists()


def test_a_payload_over_the_stash_limit_is_a_413(api, make_stash, submitter):
    make_stash("small", max_payload_bytes=20)
    response = post(api(submitter), {"stash": "small", "payload": {"text": "x" * 20}})
    assert response.status_code == 413
    assert response.json() == {"detail": "The payload is 31 bytes; this stash takes at most 20."}
    assert not Content.objects.exists()
    assert post(api(submitter), {"stash": "small", "payload": {"text": "x" * 9}}).status_code == 201


def test_a_body_over_the_global_limit_is_a_413(api, audit, submitter, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = post(api(submitter), {"stash": "audit", "payload": {"text": "x" * 1000}})
    assert response.status_code == 413
    assert response.json() == {"detail": "The request body is larger than the 1000 bytes this server accepts."}
    assert not Content.objects.exists()


def test_a_form_encoded_body_is_a_415(api, audit, submitter):
    response = api(submitter).post(URL, {"stash": "audit", "payload": "{}"})
    assert response.status_code == 415
    assert response.json()["detail"].startswith('Unsupported media type "multipart/form-data;')


# --- listing ---------------------------------------------------------------------------------


@pytest.fixture
def items(audit, make_stash, submitter, make_user, settings):
    """Two items of sam's (one judged), one of olga's, one in another stash."""
    settings.STASH_BATCH_SIZE = 1  # judge spam alone: a batch takes in other items waiting in its stash
    other = make_user("olga", "stash.add_content")
    notes = make_stash("notes")
    mine = processing.submit(audit, {"text": "mine"}, submitter)[0]
    spam = processing.submit(audit, {"text": "spam"}, submitter)[0]
    theirs = processing.submit(audit, {"text": "theirs"}, other)[0]
    elsewhere = processing.submit(notes, {"text": "note"}, other)[0]
    processing.judge([spam.pk])
    return {"mine": mine, "spam": spam, "theirs": theirs, "elsewhere": elsewhere, "olga": other}


def ids(response):
    assert response.status_code == 200, response.content
    return [item["id"] for item in response.json()["results"]]


def test_a_submitter_lists_only_their_own_items_newest_first(api, items, submitter):
    assert ids(api(submitter).get(URL)) == [str(items["spam"].pk), str(items["mine"].pk)]


def test_the_view_permission_lists_every_item(api, items, viewer):
    assert len(ids(api(viewer).get(URL))) == 4


def test_the_list_filters_by_stash_and_status(api, items, viewer):
    client = api(viewer)
    assert set(ids(client.get(URL, {"stash": "notes"}))) == {str(items["elsewhere"].pk)}
    assert ids(client.get(URL, {"stash": "audit", "status": "rejected"})) == [str(items["spam"].pk)]
    assert len(ids(client.get(URL, {"stash": "audit", "status": "pending"}))) == 2


@pytest.mark.parametrize(
    "params, field, message",
    [
        ({"status": "great"}, "status", '"great" is not a valid choice.'),
        ({"stash": "nowhere"}, "stash", "There is no stash slug=nowhere."),
        ({"stash": "\x00"}, "stash", "There is no stash slug=\x00."),
        ({"stash": ""}, "stash", "Give a value, or leave the parameter out."),
        ({"status": ""}, "status", "Give a value, or leave the parameter out."),
    ],
)
def test_an_unknown_filter_value_is_a_400(api, items, viewer, params, field, message):
    response = api(viewer).get(URL, params)
    assert response.status_code == 400
    assert response.json() == {field: [message]}


def test_the_list_filters_narrow_the_list_only_not_an_items_own_url(api, items, viewer):
    response = api(viewer).get(detail(items["mine"]), {"status": "great", "stash": "notes"})
    assert response.status_code == 200
    assert response.json()["id"] == str(items["mine"].pk)


def test_the_list_pages_by_cursor_through_every_item_once(api, audit, submitter):
    created = {str(processing.submit(audit, {"n": n}, submitter)[0].pk) for n in range(7)}
    client, seen, url = api(submitter), [], f"{URL}?page_size=3"
    while url:
        page = client.get(url).json()
        assert len(page["results"]) <= 3
        seen += [item["id"] for item in page["results"]]
        url = page["next"]
    assert sorted(seen) == sorted(created)


def test_a_bad_cursor_is_a_404(api, items, submitter):
    response = api(submitter).get(URL, {"cursor": "garbage"})
    assert response.status_code == 404
    assert response.json() == {"detail": "Invalid cursor"}


def test_listing_needs_authentication(api, items):
    assert api().get(URL).status_code == 401


# --- reading ---------------------------------------------------------------------------------


def test_an_item_reads_with_the_trail_of_its_latest_run(api, items, submitter):
    body = api(submitter).get(detail(items["spam"])).json()
    assert (body["status"], body["reason"]) == ("rejected", "contains blocked word 'spam' in text")
    assert body["decided_by"]["hook"] == "keyword_blocklist"
    assert body["run"]["outcome"] == "rejected"
    assert [(step["hook"], step["outcome"], step["message"]) for step in body["run"]["trail"]] == [
        ("require_fields", "kept", ""),
        ("keyword_blocklist", "dropped", "contains blocked word 'spam' in text"),
    ]


def test_a_pending_item_has_no_run_yet(api, items, submitter):
    body = api(submitter).get(detail(items["mine"])).json()
    assert (body["status"], body["run"], body["decided_by"]) == ("pending", None, None)


def test_someone_elses_item_is_not_found_unless_you_may_view_all(api, items, submitter, viewer):
    response = api(submitter).get(detail(items["theirs"]))
    assert response.status_code == 404
    assert response.json() == {"detail": "No Content matches the given query."}
    assert api(viewer).get(detail(items["theirs"])).status_code == 200


@pytest.mark.parametrize("path", ["/api/contents/not-a-uuid/", "/api/contents/00000000-0000-0000-0000-000000000000/"])
def test_an_unknown_item_is_a_json_404(api, submitter, path):
    response = api(submitter).get(path)
    assert response.status_code == 404
    assert "detail" in response.json()


# --- editing ---------------------------------------------------------------------------------


def test_patching_the_payload_makes_a_new_revision_that_is_judged_again(api, items, submitter):
    spam = items["spam"]
    response = api(submitter).patch(detail(spam), {"payload": {"text": "clean now"}}, format="json")

    assert response.status_code == 200
    body = response.json()
    assert (body["revision"], body["status"], body["payload"]) == (2, "pending", {"text": "clean now"})
    processing.judge([spam.pk])
    spam.refresh_from_db()
    assert (spam.status, spam.processed_revision) == ("accepted", 2)
    after = api(submitter).get(detail(spam)).json()
    assert (after["run"]["revision"], after["run"]["outcome"]) == (2, "accepted")
    assert list(spam.runs.values_list("revision", "outcome")) == [(2, "accepted"), (1, "rejected")]


def test_patching_with_the_same_payload_changes_nothing(api, items, submitter):
    spam = items["spam"]
    body = api(submitter).patch(detail(spam), {"payload": {"text": "spam"}}, format="json").json()
    assert (body["revision"], body["status"]) == (1, "rejected")


def test_only_the_submitter_or_the_change_permission_may_patch(api, items, viewer, make_user):
    mine = items["mine"]
    response = api(viewer).patch(detail(mine), {"payload": {"text": "vera was here"}}, format="json")
    assert response.status_code == 403
    assert response.json() == {"detail": "You may not change this item."}
    editor = make_user("ed", "stash.view_content", "stash.change_content")
    assert api(editor).patch(detail(mine), {"payload": {"text": "edited"}}, format="json").status_code == 200
    assert Content.objects.get(pk=mine.pk).payload == {"text": "edited"}


def test_patching_checks_the_payload_like_a_submission(api, items, submitter, audit):
    client = api(submitter)
    bad = client.patch(detail(items["mine"]), {"payload": ["no"]}, format="json")
    assert (bad.status_code, bad.json()) == (400, {"payload": ["The payload must be a JSON object, not an array."]})
    audit.max_payload_bytes = 30
    audit.save()
    big = client.patch(detail(items["mine"]), {"payload": {"text": "x" * 30}}, format="json")
    assert big.status_code == 413
    assert Content.objects.get(pk=items["mine"].pk).payload == {"text": "mine"}


@pytest.mark.parametrize("method", ["put", "delete"])
def test_items_are_neither_replaced_nor_deleted_through_the_api(api, items, viewer, method):
    response = getattr(api(viewer), method)(detail(items["mine"]), {"payload": {}}, format="json")
    assert response.status_code == 405
    assert response.json() == {"detail": f'Method "{method.upper()}" not allowed.'}


# --- judging again ---------------------------------------------------------------------------


def test_reprocess_sets_the_item_pending_and_it_is_judged_again(api, items, make_user, audit):
    spam = items["spam"]
    audit.hooks.get(hook="keyword_blocklist").delete()
    editor = make_user("ed", "stash.view_content", "stash.change_content")
    response = api(editor).post(f"{detail(spam)}reprocess/")
    assert response.status_code == 202
    assert response.json()["status"] == "pending"
    processing.judge([spam.pk])
    spam.refresh_from_db()
    assert spam.status == "accepted"
    assert spam.runs.count() == 2


def test_reprocess_needs_the_change_permission(api, items, submitter):
    response = api(submitter).post(f"{detail(items['spam'])}reprocess/")
    assert response.status_code == 403
    assert response.json() == {"detail": "Judging items again needs the permission to change content."}
    assert Content.objects.get(pk=items["spam"].pk).status == "rejected"


@pytest.mark.parametrize(
    "page_size, message",
    [
        ("null", "A valid integer is required."),
        ("0", "Ensure this value is greater than or equal to 1."),
        ("501", "Ensure this value is less than or equal to 500."),
        ("", "Give a value, or leave the parameter out."),
    ],
)
def test_a_page_size_that_is_not_1_to_500_is_a_400(api, audit, submitter, page_size, message):
    response = api(submitter).get(URL, {"page_size": page_size})
    assert response.status_code == 400
    assert response.json() == {"page_size": [message]}
