"""The hook registry: strict names, decorator or call, and no leaks out of the tests. No database."""

import pytest
from django.apps import apps

from stash import hooks
from stash.core import registry
from stash.core.exceptions import AlreadyRegistered, NotRegistered


@pytest.fixture
def clean_registry():
    """Let a test register and unregister freely; the global registry is put back afterwards."""
    saved = dict(registry._hooks)
    try:
        yield registry
    finally:
        registry._hooks.clear()
        registry._hooks.update(saved)


def make_filter(doc="A test filter."):
    return type("TestFilter", (hooks.Filter,), {"__doc__": doc, "filter": lambda self, item: self.keep()})


def test_register_as_decorator(clean_registry):
    @registry.register("tmp_decorated")
    class Decorated(hooks.Filter):
        """Decorated."""

    assert Decorated.__name__ == "Decorated"  # the decorator returns the class itself
    assert registry.get("tmp_decorated") is Decorated
    assert Decorated.name == "tmp_decorated"
    assert registry.is_registered("tmp_decorated")


def test_register_as_call(clean_registry):
    cls = make_filter()

    returned = registry.register("tmp_called", cls)

    assert returned is cls
    assert registry.get("tmp_called") is cls
    assert cls.name == "tmp_called"


def test_hooks_package_reexports_register():
    assert hooks.register is registry.register


@pytest.mark.parametrize("base", [hooks.Filter, hooks.Transform, hooks.Sink])
def test_every_kind_registers(clean_registry, base):
    cls = type("K", (base,), {})

    registry.register(f"tmp_kind_{base.kind}", cls)

    assert registry.get(f"tmp_kind_{base.kind}") is cls


def test_plain_object_with_a_kind_registers(clean_registry):
    class Duck:
        kind = "filter"

    registry.register("tmp_duck", Duck)

    assert registry.get("tmp_duck") is Duck


def test_all_is_sorted_by_name(clean_registry):
    registry._hooks.clear()
    b, a, c = make_filter(), make_filter(), make_filter()
    registry.register("tmp_b", b)
    registry.register("tmp_a", a)
    registry.register("tmp_c", c)

    assert registry.all() == [a, b, c]
    assert [cls.name for cls in registry.all()] == ["tmp_a", "tmp_b", "tmp_c"]


def test_duplicate_name_raises_and_keeps_the_first(clean_registry):
    first, second = make_filter(), make_filter()
    registry.register("tmp_dup", first)

    with pytest.raises(AlreadyRegistered, match=r"A hook named 'tmp_dup' is already registered \(TestFilter\)"):
        registry.register("tmp_dup", second)

    assert registry.get("tmp_dup") is first
    assert second.name != "tmp_dup"


def test_duplicate_via_decorator_raises(clean_registry):
    registry.register("tmp_dup2", make_filter())

    with pytest.raises(AlreadyRegistered, match="tmp_dup2"):

        @registry.register("tmp_dup2")
        class Again(hooks.Filter):
            pass


def test_builtin_name_cannot_be_taken(clean_registry):
    with pytest.raises(AlreadyRegistered, match="'require_fields' is already registered"):
        registry.register("require_fields", make_filter())


def test_get_unknown_raises_not_registered():
    with pytest.raises(NotRegistered, match="No hook named 'tmp_nope' is registered"):
        registry.get("tmp_nope")
    assert registry.is_registered("tmp_nope") is False


def test_unregister_removes_and_then_raises(clean_registry):
    registry.register("tmp_gone", make_filter())

    registry.unregister("tmp_gone")

    assert not registry.is_registered("tmp_gone")
    with pytest.raises(NotRegistered, match="No hook named 'tmp_gone' is registered"):
        registry.get("tmp_gone")
    with pytest.raises(NotRegistered, match="No hook named 'tmp_gone' is registered"):
        registry.unregister("tmp_gone")


def test_name_can_be_reused_after_unregister(clean_registry):
    old, new = make_filter(), make_filter()
    registry.register("tmp_reuse", old)
    registry.unregister("tmp_reuse")

    registry.register("tmp_reuse", new)

    assert registry.get("tmp_reuse") is new


@pytest.mark.parametrize("name", ["a", "a1", "my.filter", "my-filter", "my_filter_2", "a" * 100])
def test_valid_names(clean_registry, name):
    cls = make_filter()

    registry.register(name, cls)

    assert registry.get(name) is cls


@pytest.mark.parametrize(
    "name",
    [
        "",
        "Upper",
        "1starts_with_digit",
        "_underscore_first",
        "has space",
        "tab\there",
        "a" * 101,
        "ünïcode",
        "slash/name",
        "trailing_newline\n",
        "\nleading_newline",
        None,
        42,
        b"bytes",
    ],
)
def test_invalid_names_are_refused(clean_registry, name):
    before = dict(registry._hooks)

    with pytest.raises(ValueError, match="Invalid hook name"):
        registry.register(name, make_filter())
    with pytest.raises(ValueError, match="use lowercase letters, digits"):
        registry.register(name)  # refused before any class is seen

    assert registry._hooks == before


@pytest.mark.parametrize(
    "cls",
    [
        type("NoKind", (), {}),
        type("WrongKind", (), {"kind": "validator"}),
        type("BaseHook", (hooks.Hook,), {}),  # kind "" - the abstract base
    ],
)
def test_non_hook_class_is_refused(clean_registry, cls):
    with pytest.raises(TypeError, match=rf"{cls.__qualname__} is not a hook: subclass Filter, Transform or Sink"):
        registry.register("tmp_not_a_hook", cls)

    assert not registry.is_registered("tmp_not_a_hook")


def test_non_hook_class_refused_by_decorator(clean_registry):
    with pytest.raises(TypeError, match="is not a hook"):

        @registry.register("tmp_not_a_hook")
        class Plain:
            pass


def test_fixture_restores_the_registry():
    # Runs after the tests above: none of their names leaked.
    assert not [name for name in registry._hooks if name.startswith("tmp_")]
    assert not {"a", "a1", "my.filter", "my-filter", "my_filter_2"} & set(registry._hooks)
    assert {"require_fields", "keyword_blocklist", "max_size"} <= set(registry._hooks)


def test_builtin_hooks_are_registered_after_django_setup():
    assert apps.ready  # pytest-django set Django up, which ran StashConfig.ready() -> discovery

    from stash.hooks.filters import KeywordBlocklist, MaxSize, RequireFields

    assert registry.get("require_fields") is RequireFields
    assert registry.get("keyword_blocklist") is KeywordBlocklist
    assert registry.get("max_size") is MaxSize
    assert [cls.kind for cls in (RequireFields, KeywordBlocklist, MaxSize)] == ["filter"] * 3
    assert not [source for source, _ in registry.load_errors if source == "stash.stash_hooks"]


# --- secrets: the one rule of which params are never shown ------------------------------------


def make_sink_with_secret():
    return type(
        "Notifier",
        (hooks.Sink,),
        {
            "__doc__": "A sink with a token.",
            "params_schema": {
                "type": "object",
                "properties": {"to": {"type": "string"}, "token": {"type": "string", "writeOnly": True}},
            },
        },
    )


def test_params_a_hook_marks_write_only_are_shown_to_no_one(clean_registry):
    registry.register("tmp_notifier", make_sink_with_secret())
    assert registry.secret_keys("tmp_notifier", {"to": "ops", "token": "t0ken"}) == {"token"}
    assert registry.shown_params("tmp_notifier", {"to": "ops", "token": "t0ken"}) == {"to": "ops"}


def test_params_sent_back_without_a_secret_keep_the_stored_one_and_a_new_one_replaces_it(clean_registry):
    registry.register("tmp_notifier", make_sink_with_secret())
    stored = {"to": "ops", "token": "t0ken"}
    assert registry.keep_secrets("tmp_notifier", {"to": "dev"}, stored) == {"to": "dev", "token": "t0ken"}
    assert registry.keep_secrets("tmp_notifier", {"to": "dev", "token": "new"}, stored) == {"to": "dev", "token": "new"}
    assert registry.keep_secrets("tmp_notifier", {}, {"to": "ops"}) == {}  # only secrets are kept


def test_every_param_of_an_unregistered_hook_is_treated_as_secret(clean_registry):
    stored = {"url": "https://example.com/", "secret": "s3cret"}
    assert registry.shown_params("retired", stored) == {}
    assert registry.keep_secrets("retired", {}, stored) == stored


def test_the_built_in_webhook_declares_its_secret():
    assert registry.secret_keys("webhook", {"url": "https://example.com/", "secret": "x", "timeout": 5}) == {"secret"}
