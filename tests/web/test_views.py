"""Web pages: the index, the submit form, the status page and its JSON, login and logout."""

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from stash import processing
from stash.models import Content

pytestmark = pytest.mark.django_db

XSS = "<script>alert('x')</script>"


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit",
        hooks=[
            {"hook": "require_fields", "params": {"fields": ["text"]}, "label": "Needs text"},
            {"hook": "keyword_blocklist", "params": {"words": ["spam"]}, "label": "No spam"},
        ],
    )


@pytest.fixture
def sam(django_user_model):
    user = django_user_model.objects.create_user("sam", password="pass-word-123")
    user.user_permissions.add(Permission.objects.get(codename="add_content"))
    return user


@pytest.fixture
def sam_client(sam):
    client = Client()
    client.login(username="sam", password="pass-word-123")
    return client


def test_the_index_lists_the_stashes_you_may_submit_to(audit, make_stash, sam_client):
    make_stash("closed", is_active=False)
    html = sam_client.get("/").content.decode()
    assert 'href="/s/audit/submit/"' in html
    assert "/s/closed/submit/" not in html


def test_anonymous_visitors_see_only_stashes_open_to_anyone(audit, make_stash, client):
    make_stash("open", name="Open box", allow_anonymous=True)
    html = client.get("/").content.decode()
    assert 'href="/s/open/submit/"' in html
    assert "/s/audit/submit/" not in html
    assert 'href="/accounts/login/?next=/"' in html


def test_user_values_are_escaped(make_stash, client):
    make_stash("open", name=XSS, description=XSS, allow_anonymous=True)
    for url in ("/", "/s/open/submit/"):
        html = client.get(url).content.decode()
        assert XSS not in html
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html


# --- the submit form -------------------------------------------------------------------------


def test_the_submit_form_carries_a_csrf_token_and_takes_a_file(audit, sam_client):
    html = sam_client.get("/s/audit/submit/").content.decode()
    assert 'name="csrfmiddlewaretoken"' in html
    assert 'enctype="multipart/form-data"' in html
    assert 'name="text"' in html and 'name="file"' in html and 'name="data"' in html


def test_submitting_saves_the_item_and_shows_its_status_page(audit, sam, sam_client):
    response = sam_client.post("/s/audit/submit/", {"text": "hello", "data": '{"n": 1}'})
    content = Content.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/c/{content.pk}/"
    assert (content.payload, content.source, content.submitted_by) == ({"text": "hello", "data": {"n": 1}}, "form", sam)


def test_an_invalid_submission_shows_the_form_again_and_saves_nothing(audit, sam_client):
    response = sam_client.post("/s/audit/submit/", {"text": "hi", "data": "[1]"})
    assert response.status_code == 200
    assert "Data must be a JSON object" in response.content.decode()
    assert not Content.objects.exists()


def test_the_form_needs_its_csrf_token(audit, sam):
    client = Client(enforce_csrf_checks=True)
    client.login(username="sam", password="pass-word-123")
    assert client.post("/s/audit/submit/", {"text": "hello"}).status_code == 403
    assert not Content.objects.exists()


def test_anonymous_visitors_are_sent_to_log_in_for_a_stash_that_needs_it(audit, client):
    response = client.get("/s/audit/submit/")
    assert (response.status_code, response["Location"]) == (302, "/accounts/login/?next=/s/audit/submit/")


def test_a_user_without_the_add_permission_is_refused(audit, django_user_model, client):
    django_user_model.objects.create_user("nobody", password="pass-word-123")
    client.login(username="nobody", password="pass-word-123")
    assert client.get("/s/audit/submit/").status_code == 403
    assert client.post("/s/audit/submit/", {"text": "hi"}).status_code == 403
    assert not Content.objects.exists()


def test_an_inactive_or_unknown_stash_has_no_form(make_stash, sam_client):
    make_stash("closed", is_active=False)
    assert sam_client.get("/s/closed/submit/").status_code == 404
    assert sam_client.get("/s/nowhere/submit/").status_code == 404


def test_an_anonymous_submitter_follows_their_own_item_and_nobody_elses(make_stash, client):
    make_stash("open", allow_anonymous=True)
    page = client.post("/s/open/submit/", {"text": "anon"}, follow=True)
    content = Content.objects.get()
    assert page.status_code == 200
    assert content.submitted_by is None
    assert client.get(f"/c/{content.pk}/status/").json()["status"] == "pending"

    stranger = Client()
    assert stranger.get(f"/c/{content.pk}/")["Location"] == f"/accounts/login/?next=/c/{content.pk}/"
    assert stranger.get(f"/c/{content.pk}/status/").status_code == 401


# --- the status page -------------------------------------------------------------------------


def test_the_status_page_shows_the_item_and_polls_until_the_verdict(audit, sam, sam_client):
    content = processing.submit(audit, {"text": XSS}, sam, Content.Source.FORM)[0]
    html = sam_client.get(f"/c/{content.pk}/").content.decode()
    assert "Waiting for the hooks to judge it" in html
    assert f'data-status-url="/c/{content.pk}/status/"' in html and 'data-done="false"' in html
    assert XSS not in html and "&lt;script&gt;" in html


def test_the_status_json_tells_the_verdict_and_the_trail_in_words(audit, sam, sam_client):
    content = processing.submit(audit, {"text": "spam " + XSS}, sam, Content.Source.FORM)[0]
    assert sam_client.get(f"/c/{content.pk}/status/").json()["done"] is False

    processing.judge([content.pk])
    body = sam_client.get(f"/c/{content.pk}/status/").json()
    assert (body["status"], body["done"]) == ("rejected", True)
    assert "Rejected" in body["html"]
    assert "<strong>Needs text</strong> kept it." in body["html"]
    assert "<strong>No spam</strong> dropped it: contains blocked word &#x27;spam&#x27; in text." in body["html"]
    assert XSS not in body["html"]


def test_an_accepted_item_says_so_on_its_page(audit, sam, sam_client):
    content = processing.submit(audit, {"text": "fine"}, sam, Content.Source.FORM)[0]
    processing.judge([content.pk])
    html = sam_client.get(f"/c/{content.pk}/").content.decode()
    assert 'data-done="true"' in html
    assert "Accepted" in html and "<strong>No spam</strong> kept it." in html


def test_someone_elses_item_is_not_found(audit, sam_client, django_user_model):
    other = django_user_model.objects.create_user("olga")
    content = processing.submit(audit, {"text": "hers"}, other)[0]
    assert sam_client.get(f"/c/{content.pk}/").status_code == 404
    assert sam_client.get(f"/c/{content.pk}/status/").status_code == 404


# --- logging in and out ----------------------------------------------------------------------


def test_log_in_and_out_with_the_project_pages(sam):
    client = Client(enforce_csrf_checks=True)
    page = client.get("/accounts/login/?next=/s/audit/submit/")
    assert page.status_code == 200
    token = page.context["csrf_token"]
    response = client.post(
        "/accounts/login/",
        {"username": "sam", "password": "pass-word-123", "next": "/s/audit/submit/", "csrfmiddlewaretoken": token},
    )
    assert response["Location"] == "/s/audit/submit/"
    assert "sam" in client.get("/").content.decode()

    token = client.get("/").context["csrf_token"]
    assert client.post("/accounts/logout/", {"csrfmiddlewaretoken": token})["Location"] == "/"
    assert 'href="/accounts/login/' in client.get("/").content.decode()


def test_wrong_credentials_show_the_form_again(sam, client):
    response = client.post("/accounts/login/", {"username": "sam", "password": "nope"})
    assert response.status_code == 200
    assert "Please enter a correct username and password." in response.content.decode()


# --- what a submitter is told, and what staff see --------------------------------------------

FAILING = {
    "hook": "condition",
    "label": "Probably spam",
    "params": {"expression": "payload.data.probability > 0.5"},
}  # no "data": the expression fails


def judged(stash, user, **payload):
    content = processing.submit(stash, payload, user, Content.Source.FORM)[0]
    processing.judge([content.pk])
    return content


def page_and_status(client, content):
    html = client.get(f"/c/{content.pk}/").content.decode()
    return html, client.get(f"/c/{content.pk}/status/").json()["html"]


@pytest.mark.parametrize("on_error", ["reject", "hold"])
def test_a_hook_failure_is_told_plainly_to_the_submitter_and_in_full_to_staff(
    make_stash, sam, sam_client, admin_client, on_error
):
    stash = make_stash(
        "audit", hooks=[{**FAILING, "on_error": on_error}, {"hook": "require_fields", "params": {"fields": ["text"]}}]
    )
    content = judged(stash, sam, text="hello")
    assert Content.objects.get(pk=content.pk).status == {"reject": "rejected", "hold": "held"}[on_error]

    for html in page_and_status(sam_client, content):
        assert "Could not be checked; a moderator will look at it" in html
        assert "<strong>Probably spam</strong> could not check it." in html
        for internal in ("ExpressionError", "no such member", "condition failed", "failed:", "Recorded reason"):
            assert internal not in html, internal
    for html in page_and_status(admin_client, content):
        assert "Could not be checked; a moderator will look at it" in html
        assert "<strong>Probably spam</strong> failed: Probably spam: ExpressionError:" in html
        assert "Recorded reason: Probably spam: ExpressionError:" in html


def test_a_held_item_waits_for_a_moderator(make_stash, sam, sam_client):
    stash = make_stash(
        "audit",
        hooks=[
            {
                "hook": "condition",
                "label": "Links",
                "params": {"expression": "payload.text.contains('http')", "action": "hold", "reason": "has a link"},
            }
        ],
    )
    html = sam_client.get(f"/c/{judged(stash, sam, text='see http://x').pk}/").content.decode()
    assert '<p class="status status-held">Waiting for a moderator</p>' in html


def test_a_rejection_gives_the_filters_reason_in_one_sentence(audit, sam, sam_client):
    html = sam_client.get(f"/c/{judged(audit, sam, text='spam').pk}/").content.decode()
    assert (
        '<p class="status status-rejected">Rejected: <span class="reason">contains blocked word '
        "&#x27;spam&#x27; in text</span></p>"
    ) in html


def test_an_item_out_of_attempts_could_not_be_checked(audit, sam, sam_client):
    content = processing.submit(audit, {"text": "hi"}, sam, Content.Source.FORM)[0]
    Content.objects.filter(pk=content.pk).update(
        status="failed",
        reason="gave up after 3 attempts: the worker stopped while judging it (interrupted in hook No spam)",
    )
    html = sam_client.get(f"/c/{content.pk}/").content.decode()
    assert "Could not be checked; a moderator will look at it" in html
    assert "gave up" not in html and "interrupted" not in html


def test_a_verdict_given_in_review_says_a_moderator_decided(audit, sam, sam_client, admin_user):
    content = judged(audit, sam, text="hello")
    processing.overturn(Content.objects.filter(pk=content.pk), admin_user, "looks like an ad")
    html = sam_client.get(f"/c/{content.pk}/").content.decode()
    assert '<p class="status status-rejected">Rejected by a moderator</p>' in html
    assert "overturned in review" not in html and "looks like an ad" not in html


def test_what_an_observing_hook_would_do_is_not_told_to_the_submitter(make_stash, sam, sam_client, admin_client):
    stash = make_stash(
        "audit",
        hooks=[{"hook": "keyword_blocklist", "label": "Trial", "mode": "observe", "params": {"words": ["hello"]}}],
    )
    content = judged(stash, sam, text="hello")
    assert "<strong>Trial</strong> only watched.</li>" in sam_client.get(f"/c/{content.pk}/").content.decode()
    assert "only watched: would drop: contains blocked word" in admin_client.get(f"/c/{content.pk}/").content.decode()


def test_the_submitted_data_is_shown_as_pretty_json(audit, sam, sam_client):
    content = judged(audit, sam, text="hi", data={"channel": "web", "tags": ["a", "ü"], "score": 0.5, "ok": True})
    html = sam_client.get(f"/c/{content.pk}/").content.decode()
    assert (
        '<pre class="data">{\n  &quot;channel&quot;: &quot;web&quot;,\n  &quot;ok&quot;: true,\n'
        "  &quot;score&quot;: 0.5,\n  &quot;tags&quot;: [\n    &quot;a&quot;,\n"
        "    &quot;ü&quot;\n  ]\n}</pre>"
    ) in html
    assert "{&#x27;channel&#x27;" not in html and "True" not in html


def test_the_status_page_stops_waiting_exactly_when_a_person_may_have_the_item_judged_again(audit, sam, sam_client):
    # One set of decided statuses: what the status page calls done is what the review offers to judge again.
    content = processing.submit(audit, {"text": "hi"}, sam, Content.Source.FORM)[0]
    done = {}
    for status in Content.Status.values:
        Content.objects.filter(pk=content.pk).update(status=status)
        item = Content.objects.get(pk=content.pk)
        done[status] = sam_client.get(f"/c/{content.pk}/status/").json()["done"]
        assert done[status] == ("judge" in processing.decisions_for(item)), status
    assert {status for status, finished in done.items() if finished} == {"accepted", "rejected", "held", "failed"}
