"""Hypothesis against the admin's lists and the HTML forms, logged in as a staff user who may only view
stash's models and as a superuser: no answer is a 5xx.

Every registered admin list is asked for with query parameters drawn from what it reads (its filters,
with the values they offer, search, ordering, pages, its date hierarchy, the admin's own flags) and
from what an attacker sends (a NUL, a lone surrogate as UTF-8 would spell it, integers past 64 bits,
quotes, any Unicode, names no list reads). The submit form, the login form and the stash's simulate,
replay and examples pages are posted fields drawn the same way.

    STASH_FUZZ_EXAMPLES   examples per page and user (default 5: a short run for the suite; `make chaos`
                          sets it higher)
"""

import os
from urllib.parse import parse_qsl, urlencode

import pytest
from axes.models import AccessAttempt
from django.apps import apps
from django.contrib import admin
from django.contrib.admin.options import IS_POPUP_VAR, TO_FIELD_VAR
from django.contrib.admin.views.main import ALL_VAR, ERROR_FLAG, ORDER_VAR, PAGE_VAR, SEARCH_VAR
from django.contrib.auth.models import Permission
from django.test import Client, RequestFactory
from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st

from stash import processing
from stash.models import Content, Example

from ..property.conftest import rolled_back
from ..property.strategies import integers, texts

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("STASH_FUZZ_EXAMPLES", "5"))
fuzzing = hypothesis_settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

#: What attackers and unlucky people type: databases, encoders and parsers trip over these.
HOSTILE = [
    "\x00",
    "a\x00b",
    "%00",
    "\ud800",
    "x\udfff",
    "'",
    '"',
    "' OR '1'='1",
    "\\",
    "",
    " ",
    "-",
    "0",
    "-1",
    "1.-2.x",
    "9" * 40,
    str(2**63),
    str(-(2**63) - 1),
    "1e999",
    "NaN",
    "null",
    "True",
    "2026-02-30",
    "💥",
    "ß",
    "\u202e",
    "\ufffd",
    "../",
    "a" * 500,
]
values = st.one_of(st.sampled_from(HOSTILE), texts, integers.map(str))


def as_sent(pairs):
    """``pairs`` URL-encoded as a client could send them: a lone surrogate as its UTF-8-like bytes."""
    return urlencode(pairs, encoding="utf-8", errors="surrogatepass")


def fuzz(pages, send):
    """Run the examples: each sends every page of ``pages``, (address, {field: values it takes}), fields
    drawn by ``fields`` with ``send(address, pairs)``, and fails on a 5xx. Each request's writes are undone."""

    @fuzzing
    @given(data=st.data())
    def run(data):
        for url, known in pages:
            pairs = data.draw(fields(known), label=url)
            with rolled_back():
                response = send(url, pairs)
            assert response.status_code < 500, (url, pairs, response.status_code, response.content[:500])

    run()


@st.composite
def fields(draw, known):
    """(name, value) pairs: mostly names in ``known`` with their values or hostile ones, sometimes any name."""
    names = sorted(known)
    pairs = []
    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        name = draw(st.one_of(st.sampled_from(names), st.sampled_from(names), st.sampled_from(names), texts))
        offered = known.get(name) or []
        pairs.append((name, draw(st.one_of(st.sampled_from(offered), values) if offered else values)))
    return pairs


def registered():
    """(model, its admin) of every model the admin site lists."""
    return [
        (model, admin.site.get_model_admin(model)) for model in apps.get_models() if admin.site.is_registered(model)
    ]


def _request(user):
    request = RequestFactory().get("/")
    request.user = user
    return request


def list_parameters(model_admin, user):
    """{parameter: values it offers} of ``model_admin``'s list as ``user`` sees it: its filters (and their
    choices), search, ordering, pages, date hierarchy and the admin's flags."""
    changelist = model_admin.get_changelist_instance(_request(user))
    known = {
        SEARCH_VAR: ["hello"],
        ORDER_VAR: ["1", "-2.1", "1.2.3"],
        PAGE_VAR: ["1", "2", "0"],
        ALL_VAR: [""],
        ERROR_FLAG: ["1"],
        TO_FIELD_VAR: ["id", "pk", "password"],
        IS_POPUP_VAR: ["1"],
    }
    for spec in changelist.filter_specs:
        for name in spec.expected_parameters():
            known.setdefault(name, [])
        for choice in spec.choices(changelist):
            for name, value in parse_qsl(choice["query_string"].lstrip("?"), keep_blank_values=True):
                known.setdefault(name, []).append(value)
    if changelist.date_hierarchy:
        for part, offered in [("year", ["2026", "1", "99999"]), ("month", ["2", "13"]), ("day", ["30", "31"])]:
            known[f"{changelist.date_hierarchy}__{part}"] = offered
    return known


@pytest.fixture
def site(make_stash, django_user_model, settings):
    """Two stashes with judged and waiting items, an example, a failed login; a view-only staff user and
    a superuser, each with a logged-in browser."""
    # One browser posting hundreds of submissions: throttling it tests nothing (429 would be an answer too).
    settings.STASH_THROTTLE_RATES = {scope: "100000/minute" for scope in settings.STASH_THROTTLE_RATES}
    audit = make_stash(
        "audit", hooks=[("require_fields", {"fields": ["text"]}), ("keyword_blocklist", {"words": ["spam"]})]
    )
    make_stash("open", allow_anonymous=True, hooks=[("max_size", {"max_bytes": 1000})])
    items = [Content.objects.create(stash=audit, payload=payload) for payload in ({"text": "hello"}, {"x": 1})]
    processing.judge([items[0].pk])
    Content.objects.create(stash=audit, payload={"text": "spam"})
    Example.objects.create(stash=audit, name="hello", payload={"text": "hello"}, verdict=Example.Verdict.ACCEPTED)
    AccessAttempt.objects.create(
        username="root",
        ip_address="10.0.0.1",
        user_agent="fuzz",
        http_accept="*/*",
        path_info="/accounts/login/",
        get_data="",
        post_data="",
        failures_since_start=1,
    )
    viewer = django_user_model.objects.create_user("viewer", password="pass-word-123", is_staff=True)
    viewer.user_permissions.set(
        Permission.objects.filter(content_type__app_label="stash", codename__startswith="view_")
    )
    superuser = django_user_model.objects.create_superuser("root", password="pass-word-123")
    users = {"viewer": viewer, "superuser": superuser}
    browsers = {"anonymous": Client()}
    for who, user in users.items():
        browsers[who] = Client()
        browsers[who].force_login(user)
    return {"stash": audit, "items": [str(item.pk) for item in items], "users": users, "browsers": browsers}


@pytest.mark.parametrize("who", ["viewer", "superuser"])
def test_every_admin_list_answers_fuzzed_filters_search_ordering_and_pages_without_a_5xx(site, who):
    user, browser = site["users"][who], site["browsers"][who]
    lists = [
        (f"/admin/{model._meta.app_label}/{model._meta.model_name}/", list_parameters(model_admin, user))
        for model, model_admin in registered()
        if model_admin.has_view_or_change_permission(_request(user))
    ]
    assert len(lists) >= 5  # stash's own lists at least
    fuzz(lists, lambda url, pairs: browser.get(f"{url}?{as_sent(pairs)}"))


#: The HTML forms, by who posts them: their address and {field: values it takes} ("{stash}", "{item}":
#: the stash's id, the items' ids).
FORMS = {
    "submit": (("anonymous", "viewer"), "/s/open/submit/", {"text": ["hello"], "data": ['{"a": 1}', "{}", "[]"]}),
    "submit, logged in": (("viewer",), "/s/audit/submit/", {"text": ["hello"], "data": ['{"a": 1}']}),
    "login": (
        ("anonymous",),
        "/accounts/login/",
        {"username": ["root", "viewer"], "password": ["pass-word-123"], "next": ["/admin/", "//evil.example/"]},
    ),
    "admin login": (
        ("anonymous",),
        "/admin/login/",
        {"username": ["root"], "password": ["pass-word-123"], "next": ["/admin/stash/"]},
    ),
    "simulate": (
        ("viewer", "superuser"),
        "/admin/stash/stash/{stash}/simulate/",
        {
            "payload": ['{"text": "spam"}', "{}", "[]"],
            "content_id": ["{item}"],
            "verbose": ["on"],
            "_draft": ["1"],
            "name": ["Audit"],
            "slug": ["audit"],
            "hooks-TOTAL_FORMS": ["0"],
            "hooks-INITIAL_FORMS": ["0"],
        },
    ),
    "replay": (
        ("viewer", "superuser"),
        "/admin/stash/stash/{stash}/replay/",
        {"last_n": ["5", "1000", "1001"], "_judge_again": [""], "ids": ["{item}"]},
    ),
    "examples": (("viewer", "superuser"), "/admin/stash/stash/{stash}/examples/", {"_run": [""]}),
}


@pytest.mark.parametrize("who", ["anonymous", "viewer", "superuser"])
def test_every_html_form_answers_fuzzed_posts_without_a_5xx(site, who):
    browser = site["browsers"][who]
    posted = [
        (
            url.format(stash=site["stash"].pk),
            {
                name: [value for offered in values for value in (site["items"] if offered == "{item}" else [offered])]
                for name, values in known.items()
            },
        )
        for whom, url, known in FORMS.values()
        if who in whom
    ]
    fuzz(posted, lambda url, pairs: browser.post(url, as_sent(pairs), content_type="application/x-www-form-urlencoded"))
