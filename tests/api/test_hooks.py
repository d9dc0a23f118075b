"""/api/hooks/ (the registry) and /api/stashes/<slug>/hooks/ (configured hooks: CRUD, reorder)."""

import pytest

from stash import hooks, processing
from stash.core import registry
from stash.models import HookConfig, Stash

pytestmark = pytest.mark.django_db

HOOKS = "/api/stashes/audit/hooks/"


@pytest.fixture
def manager(make_user):
    return make_user(
        "max", "stash.view_hookconfig", "stash.add_hookconfig", "stash.change_hookconfig", "stash.delete_hookconfig"
    )


def version(slug="audit"):
    return Stash.objects.get(slug=slug).config_version


# --- the registry ----------------------------------------------------------------------------


def test_the_registry_lists_every_hook_with_kind_description_and_params_schema(api, submitter):
    body = api(submitter).get("/api/hooks/").json()
    assert [hook["name"] for hook in body] == [hook.name for hook in registry.all()]
    require = next(hook for hook in body if hook["name"] == "require_fields")
    assert require["kind"] == "filter"
    assert require["description"] == registry.get("require_fields").description()
    assert require["params_schema"]["required"] == ["fields"]


def test_the_registry_is_read_at_request_time(api, audit, manager, register_temporarily):
    class Late(hooks.Filter):
        """Registered after start-up."""

        def filter(self, item):
            return self.keep()

    register_temporarily("test_late", Late)
    client = api(manager)
    assert {
        "name": "test_late",
        "kind": "filter",
        "description": "Registered after start-up.",
        "params_schema": Late.params_schema,
    } in client.get("/api/hooks/").json()
    assert client.post(HOOKS, {"hook": "test_late"}, format="json").status_code == 201


def test_the_registry_needs_authentication(api):
    assert api().get("/api/hooks/").status_code == 401


# --- reading and adding ----------------------------------------------------------------------


def test_the_hooks_of_a_stash_list_in_order(api, audit, manager):
    body = api(manager).get(HOOKS).json()
    assert [(hook["hook"], hook["position"], hook["missing"]) for hook in body] == [
        ("require_fields", 1, False),
        ("keyword_blocklist", 2, False),
    ]
    one = api(manager).get(f"{HOOKS}{body[1]['id']}/").json()
    assert one["params"] == {"words": ["spam"]}


def test_adding_a_hook_appends_it_and_changes_the_stash_version(api, audit, manager):
    before = version()
    response = api(manager).post(
        HOOKS,
        {"hook": "max_size", "label": "Small", "params": {"max_bytes": 100}, "condition": "has(payload.text)"},
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert (body["hook"], body["label"], body["position"], body["enabled"]) == ("max_size", "Small", 3, True)
    assert version() > before
    config = HookConfig.objects.get(pk=body["id"])
    assert (config.stash.slug, config.params, config.condition) == ("audit", {"max_bytes": 100}, "has(payload.text)")


def test_a_hook_config_caches_its_outcome_for_cache_seconds(api, audit, manager):
    client = api(manager)
    body = client.post(HOOKS, {"hook": "max_size", "params": {"max_bytes": 100}, "cache_seconds": 300}, format="json")
    assert body.status_code == 201 and body.json()["cache_seconds"] == 300
    before = version()

    changed = client.patch(f"{HOOKS}{body.json()['id']}/", {"cache_seconds": 0}, format="json")

    assert changed.status_code == 200 and changed.json()["cache_seconds"] == 0
    assert version() > before  # a change of the pipeline: recorded as a version
    assert client.get(HOOKS).json()[0]["cache_seconds"] == 0


@pytest.mark.parametrize(
    "body, field, message",
    [
        ({"hook": "os.system", "params": {}}, "hook", '"os.system" is not a valid choice.'),
        ({"hook": "stash.hooks.filters.MaxSize"}, "hook", '"stash.hooks.filters.MaxSize" is not a valid choice.'),
        (
            {"hook": "max_size", "params": {"max_bytes": "big"}},
            "params",
            "Invalid params for hook 'max_size': max_bytes: Must be a whole number.",
        ),
        (
            {"hook": "max_size", "params": {}},
            "params",
            "Invalid params for hook 'max_size': max_bytes: This field is required.",
        ),
        ({"hook": "max_size", "params": {"max_bytes": 1}, "condition": '__import__("os")'}, "condition", ""),
        (
            {"hook": "max_size", "params": {"max_bytes": 1}, "mode": "destroy"},
            "mode",
            '"destroy" is not a valid choice.',
        ),
        (
            {"hook": "max_size", "params": {"max_bytes": 1}, "timeout_ms": -1},
            "timeout_ms",
            "Ensure this value is greater than or equal to 0.",
        ),
        (
            {"hook": "keyword_blocklist", "params": {"words": ["a\u0000"]}},
            "params",
            "The params contains a NUL character (\\u0000), which cannot be stored.",
        ),
        ({"hook": "keyword_blocklist", "params": None}, "params", "This field may not be null."),
        (
            {"hook": "keyword_blocklist", "params": ["spam"]},
            "params",
            "The params must be a JSON object, not an array.",
        ),
        ({"hook": "log", "condition": "payload.text == '\u0000'"}, "condition", "Null characters are not allowed."),
        ({"hook": "log", "condition": 0}, "condition", "Not a valid string."),
        ({"hook": "log", "label": 7}, "label", "Not a valid string."),
        ({"hook": "log", "enabled": 0}, "enabled", "Must be a valid boolean."),
        ({"hook": "log", "timeout_ms": "500"}, "timeout_ms", "A valid integer is required."),
        ({"hook": "log", "cache_seconds": -1}, "cache_seconds", "Ensure this value is greater than or equal to 0."),
    ],
)
def test_an_invalid_hook_config_is_a_400_naming_the_field(api, audit, manager, body, field, message):
    before = version()
    response = api(manager).post(HOOKS, body, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert list(errors) == [field]
    assert message in errors[field][0]
    assert HookConfig.objects.count() == 2
    assert version() == before


@pytest.mark.parametrize("method, path", [("post", ""), ("patch", "{pk}/"), ("put", "{pk}/")])
def test_a_hook_config_is_checked_once_per_request(api, audit, manager, register_temporarily, method, path):
    checked = []

    class Counted(hooks.Filter):
        """Counts the checks of its params."""

        params_schema = {"type": "object"}

        @classmethod
        def check_params(cls, params):
            checked.append(dict(params))
            return {}

        def filter(self, item):
            return self.keep()

    register_temporarily("test_counted", Counted)
    config = HookConfig.objects.create(stash=audit, hook="test_counted")
    checked.clear()
    response = getattr(api(manager), method)(
        HOOKS + path.format(pk=config.pk), {"hook": "test_counted", "params": {"n": 2}}, format="json"
    )
    assert response.status_code in (200, 201), response.content
    assert checked == [{"n": 2}]


# --- changing and removing -------------------------------------------------------------------


def test_a_hook_config_is_changed_and_checked_again(api, audit, manager):
    blocklist = audit.hooks.get(hook="keyword_blocklist")
    url = f"{HOOKS}{blocklist.pk}/"
    client = api(manager)

    response = client.patch(url, {"params": {"words": ["spam", "scam"]}, "mode": "observe"}, format="json")
    assert response.status_code == 200
    blocklist.refresh_from_db()
    assert (blocklist.params, blocklist.mode) == ({"words": ["spam", "scam"]}, "observe")

    bad = client.patch(url, {"params": {"words": []}}, format="json")
    assert bad.status_code == 400
    assert "words: Must not be empty." in bad.json()["params"][0]
    blocklist.refresh_from_db()
    assert blocklist.params == {"words": ["spam", "scam"]}

    replaced = client.put(url, {"hook": "max_size", "params": {"max_bytes": 10}}, format="json")
    assert replaced.status_code == 200
    assert replaced.json()["position"] == blocklist.position  # a replace keeps its place


@pytest.mark.parametrize("method", ["put", "patch"])
def test_changing_a_hook_config_deleted_meanwhile_is_a_404_and_brings_nothing_back(
    api, audit, manager, method, register_temporarily, monkeypatch
):
    class Vanishing(hooks.Filter):
        """Its config is deleted (by another request) after the change to it was read, before it is saved."""

        params_schema = {"type": "object"}

        def filter(self, item):
            return self.keep()

    def deleted_first(config):
        # The other request's delete takes the stash's lock first: the save, under that lock, finds the row gone.
        HookConfig.objects.filter(hook="test_vanishing").delete()
        return save_hook(config)

    register_temporarily("test_vanishing", Vanishing)
    config = HookConfig.objects.create(stash=audit, hook="test_vanishing")
    save_hook = processing.save_hook
    monkeypatch.setattr(processing, "save_hook", deleted_first)
    response = getattr(api(manager), method)(
        f"{HOOKS}{config.pk}/", {"hook": "test_vanishing", "params": {"n": 1}}, format="json"
    )
    assert response.status_code == 404
    assert response.json() == {"detail": "This hook config was deleted meanwhile."}
    assert not HookConfig.objects.filter(hook="test_vanishing").exists()


def test_a_hook_config_is_removed(api, audit, manager):
    blocklist = audit.hooks.get(hook="keyword_blocklist")
    before = version()
    assert api(manager).delete(f"{HOOKS}{blocklist.pk}/").status_code == 204
    assert list(audit.hooks.values_list("hook", flat=True)) == ["require_fields"]
    assert version() > before


def test_removing_a_hook_config_closes_the_gap_in_the_order(api, audit, manager):
    first = audit.hooks.in_order().first()
    HookConfig.objects.create(stash=audit, hook="max_size", params={"max_bytes": 100})
    assert api(manager).delete(f"{HOOKS}{first.pk}/").status_code == 204
    assert list(audit.hooks.in_order().values_list("position", flat=True)) == [1, 2]


def test_a_hook_of_another_stash_is_not_found_here(api, audit, make_stash, manager):
    other = make_stash("notes", hooks=[("max_size", {"max_bytes": 1})]).hooks.get()
    client = api(manager)
    assert client.get(f"{HOOKS}{other.pk}/").status_code == 404
    assert client.delete(f"{HOOKS}{other.pk}/").status_code == 404
    assert HookConfig.objects.filter(pk=other.pk).exists()


def test_an_unknown_stash_has_no_hooks(api, manager):
    response = api(manager).get("/api/stashes/nowhere/hooks/")
    assert response.status_code == 404
    assert response.json() == {"detail": "No Stash matches the given query."}


@pytest.mark.parametrize(
    "perm, method, allowed",
    [("view", "get", 200), ("add", "post", 201), ("change", "patch", 200), ("delete", "delete", 204)],
)
def test_each_method_needs_its_model_permission(api, audit, make_user, perm, method, allowed):
    target = audit.hooks.get(hook="keyword_blocklist")
    url = HOOKS if method == "post" else f"{HOOKS}{target.pk}/"
    body = {"hook": "max_size", "params": {"max_bytes": 5}} if method == "post" else {"label": "x"}
    others = [p for p in ("view", "add", "change", "delete") if p != perm]
    without = api(make_user("without", *[f"stash.{p}_hookconfig" for p in others]))
    response = getattr(without, method)(url, body, format="json")
    assert response.status_code == 403
    assert response.json() == {"detail": "You do not have permission to perform this action."}
    holder = api(make_user("holder", f"stash.{perm}_hookconfig"))
    assert getattr(holder, method)(url, body, format="json").status_code == allowed


def test_managing_hooks_needs_authentication(api, audit):
    assert api().get(HOOKS).status_code == 401


# --- reordering ------------------------------------------------------------------------------


def reorder(client, order, config_version):
    return client.post(f"{HOOKS}reorder/", {"order": order, "config_version": config_version}, format="json")


def test_reorder_puts_the_hooks_in_the_given_order(api, audit, manager):
    require, blocklist = audit.hooks.in_order()
    response = reorder(api(manager), [blocklist.pk, require.pk], version())

    assert response.status_code == 200
    body = response.json()
    assert [(hook["id"], hook["position"]) for hook in body["hooks"]] == [(blocklist.pk, 1), (require.pk, 2)]
    assert body["config_version"] == version()
    assert list(audit.hooks.in_order().values_list("pk", flat=True)) == [blocklist.pk, require.pk]


def test_reorder_based_on_an_old_version_is_a_409_and_moves_nothing(api, audit, manager):
    require, blocklist = audit.hooks.in_order()
    seen = version()
    blocklist.label = "changed by someone else"
    blocklist.save()
    response = reorder(api(manager), [blocklist.pk, require.pk], seen)

    assert response.status_code == 409
    assert response.json() == {
        "detail": f"The hooks of audit changed since version {seen} (now {version()}): reload them and try again."
    }
    assert list(audit.hooks.in_order().values_list("pk", flat=True)) == [require.pk, blocklist.pk]


@pytest.mark.parametrize(
    "order",
    [
        lambda require, blocklist: [],
        lambda require, blocklist: [require.pk],
        lambda require, blocklist: [require.pk, require.pk],
        lambda require, blocklist: [require.pk, blocklist.pk, 999_999],
    ],
)
def test_reorder_must_name_every_hook_once(api, audit, manager, order):
    require, blocklist = audit.hooks.in_order()
    response = reorder(api(manager), order(require, blocklist), version())
    assert response.status_code == 400
    assert response.json() == {"order": ["The new order must list every hook of the stash exactly once."]}
    assert list(audit.hooks.in_order().values_list("pk", flat=True)) == [require.pk, blocklist.pk]


def test_reorder_needs_the_change_permission(api, audit, make_user):
    require, blocklist = audit.hooks.in_order()
    client = api(make_user("viewer", "stash.view_hookconfig", "stash.add_hookconfig"))
    response = reorder(client, [blocklist.pk, require.pk], version())
    assert response.status_code == 403
    assert response.json() == {"detail": "Reordering hooks needs the permission to change hook configs."}


def test_a_webhook_secret_is_stored_but_never_shown_and_survives_edits(api, audit, manager):
    client = api(manager)
    secret = "s3cret-s3cret-s3cret"
    created = client.post(
        HOOKS, {"hook": "webhook", "params": {"url": "https://example.com/in", "secret": secret}}, format="json"
    )
    assert created.status_code == 201
    assert created.json()["params"] == {"url": "https://example.com/in"}
    url = f"{HOOKS}{created.json()['id']}/"
    assert secret not in client.get(url).content.decode()
    assert secret not in client.get(HOOKS).content.decode()

    edited = client.patch(url, {"params": {"url": "https://example.com/other"}, "label": "Hook"}, format="json")
    assert edited.status_code == 200
    config = HookConfig.objects.get(pk=created.json()["id"])
    assert config.params == {"url": "https://example.com/other", "secret": secret}


def test_a_webhook_given_two_different_times_is_a_400_on_timeout_ms(api, audit, manager):
    body = {
        "hook": "webhook",
        "params": {"url": "https://hooks.example.com/in", "secret": "s3cret-s3cret-s3cret", "timeout": 5},
        "timeout_ms": 8000,
    }

    response = api(manager).post(HOOKS, body, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "timeout_ms": [
            (
                "webhook's time is its timeout param (5 s), not this field: set the time there, "
                "and leave this at 2000 ms (or give the same time, 5000 ms)."
            )
        ]
    }
    assert not HookConfig.objects.filter(hook="webhook").exists()
