"""A hook config saved through the admin, the API or a pipeline document: the same secrets kept (those
the user was never shown), the same checks under the stash's lock, the same version recorded."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from stash import hooks, processing
from stash.models import HookConfig
from tests.admin.test_admin import change_url
from tests.processing.test_configuring import lock_queries

pytestmark = pytest.mark.django_db

SECRET = "s3cret-s3cret-s3cret-s3cret"
URL = "https://example.com/in"
WEBHOOK = {"hook": "webhook", "label": "Tell them", "params": {"url": URL, "secret": SECRET, "events": ["accept"]}}


class Signed(hooks.Filter):
    """Keep everything; a hook with a secret of the same name as the webhook's, but optional."""

    params_schema = {
        "type": "object",
        "properties": {"url": {"type": "string"}, "secret": {"type": "string", "writeOnly": True}},
        "required": ["url"],
        "additionalProperties": False,
    }

    def filter(self, item):
        return self.keep()


@pytest.fixture
def stashes(make_stash):
    """Two stashes alike, each with a webhook holding a secret: one for each face to change."""
    return (
        make_stash("audit", hooks=[("require_fields", {"fields": ["text"]}), WEBHOOK]),
        make_stash("copy", hooks=[("require_fields", {"fields": ["text"]}), WEBHOOK]),
    )


@pytest.fixture
def api(admin_user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=admin_user).key}")
    return client


def webhook_of(stash):
    return stash.hooks.get(label="Tell them")


def admin_save(client, config, **fields):
    """The hook config's admin page, posted as the browser does, with its params as the page shows them."""
    shown = client.get(change_url(config)).context["adminform"].form.initial["params"]
    post = {
        "hook": config.hook,
        "label": config.label,
        "params": json.dumps({**shown, **fields.pop("params", {})}),
        "enabled": "on",
        "mode": "enforce",
        "on_error": "inherit",
        "condition": "",
        "timeout_ms": 2000,
        **fields,
    }
    return client.post(change_url(config), post)


def api_save(api, config, **fields):
    """A PUT of the hook config with its params as the API shows them."""
    url = f"/api/stashes/{config.stash.slug}/hooks/{config.pk}/"
    shown = api.get(url).json()
    body = {name: shown[name] for name in ("hook", "label", "enabled", "mode", "on_error", "condition", "timeout_ms")}
    return api.put(url, {**body, "params": {**shown["params"], **fields.pop("params", {})}, **fields}, format="json")


def import_save(config, **fields):
    """A pipeline document (with config ids, as a version's) whose entry for the config has its params as shown."""
    document = processing.public_document(processing.export_document(config.stash))
    for entry, saved in zip(document["hooks"], config.stash.hooks.in_order(), strict=True):
        entry["id"] = saved.pk
        if saved.pk == config.pk:
            entry["params"] = {**entry["params"], **fields.pop("params", {})}
            entry.update(fields)
    return processing.import_document(config.stash, document)


def test_what_each_face_shows_leaves_the_secret_out(admin_client, api, stashes):
    config = webhook_of(stashes[0])
    admin_shown = admin_client.get(change_url(config)).context["adminform"].form.initial["params"]
    api_shown = api.get(f"/api/stashes/audit/hooks/{config.pk}/").json()["params"]
    assert admin_shown == api_shown == {"url": URL, "events": ["accept"]}


@pytest.mark.parametrize("face", ["admin", "api", "import"])
def test_params_sent_back_as_shown_keep_the_stored_secret(admin_client, api, stashes, face):
    config = webhook_of(stashes[0])
    changed = {"params": {"url": "https://example.com/other"}}
    if face == "admin":
        assert admin_save(admin_client, config, **changed).status_code == 302
    elif face == "api":
        assert api_save(api, config, **changed).status_code == 200
    else:
        assert import_save(config, **changed).applied
    assert HookConfig.objects.get(pk=config.pk).params == {
        "url": "https://example.com/other",
        "secret": SECRET,
        "events": ["accept"],
    }


@pytest.mark.parametrize("face", ["admin", "api", "import"])
def test_a_config_switched_to_another_hook_keeps_no_secret_of_the_old_one(
    admin_client, api, stashes, face, register_temporarily
):
    # The old secret was the webhook's: the other hook's service must never be sent it.
    register_temporarily("test_signed", Signed)
    config = webhook_of(stashes[0])
    switched = {"hook": "test_signed", "params": {"url": URL}}
    if face == "admin":
        client_params = {**switched, "params": json.dumps({"url": URL})}
        post = {
            "label": config.label,
            "enabled": "on",
            "mode": "enforce",
            "on_error": "inherit",
            "condition": "",
            "timeout_ms": 2000,
            **client_params,
        }
        assert admin_client.post(change_url(config), post).status_code == 302
    elif face == "api":
        response = api.patch(f"/api/stashes/audit/hooks/{config.pk}/", switched, format="json")
        assert response.status_code == 200, response.json()
    else:
        document = processing.export_document(config.stash)
        document["hooks"] = [
            {**entry, "id": saved.pk, **(switched if saved.pk == config.pk else {})}
            for entry, saved in zip(document["hooks"], config.stash.hooks.in_order(), strict=True)
        ]
        assert processing.import_document(config.stash, document).applied
    saved = HookConfig.objects.get(pk=config.pk)
    assert (saved.hook, saved.params) == ("test_signed", {"url": URL})


def test_a_change_through_the_api_records_the_version_the_admin_records(admin_client, api, stashes, admin_user):
    audit, copy = stashes
    assert admin_save(admin_client, webhook_of(audit), params={"events": ["reject"]}, label="Told").status_code == 302
    assert api_save(api, webhook_of(copy), params={"events": ["reject"]}, label="Told").status_code == 200

    def last_version(stash):
        version = stash.versions.order_by("-number").first()
        hooks = [{key: value for key, value in hook.items() if key != "id"} for hook in version.document["hooks"]]
        return version.number, version.summary, version.created_by, hooks, stash.versions.count()

    assert last_version(audit) == last_version(copy)
    number, summary, author, hooks, _count = last_version(copy)
    assert (summary, author) == ('Told: label "Tell them" → Told, events ["accept"] → ["reject"]', admin_user)
    assert hooks[1]["params"] == {"url": URL, "secret": SECRET, "events": ["reject"]}


def test_a_hook_added_through_the_api_is_counted_against_the_limit_under_the_stash_lock(api, stashes):
    # As the admin's save does (processing.save_hook): two adds at once cannot both pass the limit.
    with CaptureQueriesContext(connection) as captured:
        response = api.post(
            "/api/stashes/audit/hooks/", {"hook": "max_size", "params": {"max_bytes": 5}}, format="json"
        )
    assert response.status_code == 201, response.json()
    queries = [query["sql"] for query in captured]
    counts = [
        index
        for index, sql in enumerate(queries)
        if sql.startswith("SELECT COUNT(*)") and 'FROM "stash_hookconfig"' in sql
    ]
    assert counts and lock_queries(queries)
    assert lock_queries(queries)[0] < counts[0]
