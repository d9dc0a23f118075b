"""The plugin API: the installed example package, discovery that survives broken modules, the test helpers, the docs."""

import io
import re
import sys
from importlib.metadata import entry_points
from pathlib import Path

import jsonschema
import pytest
from django.core.checks import run_checks
from django.core.management import call_command

from stash import apps, hooks, processing
from stash.core import pipeline, registry
from stash.core.exceptions import InvalidParams, NotRegistered
from stash.core.testing import build_hook, register_temporarily, run_hook, send_event
from stash.hooks.webhook import signature
from stash.models import Content

ROOT = Path(__file__).resolve().parents[2]
BUILT_IN = {
    "filter": {
        "require_fields",
        "keyword_blocklist",
        "regex",
        "max_size",
        "min_score",
        "json_schema",
        "duplicate",
        "file_type",
        "rate_limit",
        "condition",
        "profanity",
        "language",
        "image_hash",
    },
    "transform": {"normalize_text", "redact_pii", "set_fields", "drop_fields"},
    "sink": {"webhook", "redis_stream", "log", "email"},
}


# --- the library as a whole -------------------------------------------------------------------


def test_every_built_in_hook_is_registered_with_its_kind():
    for kind, names in BUILT_IN.items():
        for name in names:
            assert registry.get(name).kind == kind, name


@pytest.mark.parametrize("hook", registry.all(), ids=lambda h: h.name)
def test_every_registered_hook_has_a_description_and_a_strict_valid_schema(hook):
    assert re.fullmatch(r"[A-Z].{10,120}\.", hook.description()), hook.description()
    jsonschema.Draft202012Validator.check_schema(hook.params_schema)
    assert hook.params_schema["type"] == "object"
    assert hook.params_schema.get("additionalProperties") is False  # a typo is an error, not ignored


@pytest.mark.parametrize(
    "hook", [registry.get(n) for names in BUILT_IN.values() for n in sorted(names)], ids=lambda h: h.name
)
def test_no_built_in_param_takes_code_or_an_import_path(hook):
    names = set(hook.params_schema.get("properties", {}))

    assert not names & {"module", "import", "callable", "class", "function", "code", "backend", "handler"}


def test_stash_hooks_lists_every_hook_with_kind_and_description():
    out = io.StringIO()
    call_command("stash_hooks", stdout=out)
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in out.getvalue().splitlines()}

    assert set(rows) == {hook.name for hook in registry.all()}
    assert set(rows) >= set().union(*BUILT_IN.values()) | {"example.max_links"}
    for hook in registry.all():
        assert rows[hook.name] == [hook.kind, hook.description()]


# --- the example package ----------------------------------------------------------------------


def test_the_example_package_is_installed_with_its_entry_point():
    [entry] = [e for e in entry_points(group=apps.ENTRY_POINT_GROUP) if e.name == "example"]

    assert entry.value == "stash_example_hooks"
    assert entry.dist.name == "stash-example-hooks"


def test_the_example_hook_is_registered_at_start_up():
    hook = registry.get("example.max_links")

    assert hook in registry.all()
    assert (hook.kind, hook.description()) == ("filter", "Drop content whose text holds more than max links.")
    assert hook.__module__ == "stash_example_hooks"


def test_the_example_hook_judges():
    links = "see https://a.example and http://b.example and HTTPS://c.example"

    assert run_hook("example.max_links", {}, {"text": links}).reason == "text has 3 links, more than 2"
    assert run_hook("example.max_links", {"max": 3}, {"text": links}).verdict == "accepted"
    assert run_hook("example.max_links", {}, {"text": None}).verdict == "accepted"
    with pytest.raises(InvalidParams, match=r"max: Must be at least 0\."):
        run_hook("example.max_links", {"max": -1}, {})


@pytest.mark.django_db
def test_the_example_hook_works_in_a_stash(make_stash):
    stash = make_stash("links", hooks=[("example.max_links", {"max": 1})])
    spam = Content.objects.create(stash=stash, payload={"text": "http://a.example http://b.example"})
    fine = Content.objects.create(stash=stash, payload={"text": "http://a.example"})

    processing.judge([spam.pk, fine.pk])

    spam.refresh_from_db()
    fine.refresh_from_db()
    assert (spam.status, spam.reason, fine.status) == ("rejected", "text has 2 links, more than 1", "accepted")


# --- discovery survives broken modules --------------------------------------------------------

GOOD = '''
from stash import hooks

@hooks.register("plugin_test.good")
class Good(hooks.Filter):
    """Keep everything."""

    def filter(self, item):
        return self.keep()
'''
CLASH = '''
from stash import hooks

@hooks.register("require_fields")
class Mine(hooks.Filter):
    """Take a name that is already taken."""
'''


@pytest.fixture
def third_party(tmp_path):
    """Installs, on sys.path, a distribution whose entry points name a broken, a clashing and a good module."""
    (tmp_path / "plugin_test_broken.py").write_text("import this_module_does_not_exist\n")
    (tmp_path / "plugin_test_syntax.py").write_text("def oops(:\n")
    (tmp_path / "plugin_test_clash.py").write_text(CLASH)
    (tmp_path / "plugin_test_good.py").write_text(GOOD)
    dist = tmp_path / "plugin_test-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: plugin-test\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[stash.hooks]\nbroken = plugin_test_broken\nsyntax = plugin_test_syntax\nclash = plugin_test_clash\n"
        "good = plugin_test_good\n"
    )
    errors_before = list(registry.load_errors)
    sys.path.insert(0, str(tmp_path))
    yield
    sys.path.remove(str(tmp_path))
    for module in [m for m in sys.modules if m.startswith("plugin_test_")]:
        del sys.modules[module]
    if registry.is_registered("plugin_test.good"):
        registry.unregister("plugin_test.good")
    registry.load_errors[:] = errors_before


def test_a_broken_third_party_module_is_reported_and_the_others_still_load(third_party):
    before = {hook.name for hook in registry.all()}

    apps.discover_hooks()

    assert {hook.name for hook in registry.all()} == before | {"plugin_test.good"}
    assert registry.get("require_fields").__module__ == "stash.hooks.filters"  # the clash took nothing over
    errors = dict(registry.load_errors)
    assert errors["entry point broken (plugin_test_broken)"] == (
        "ModuleNotFoundError: No module named 'this_module_does_not_exist'"
    )
    assert errors["entry point syntax (plugin_test_syntax)"].startswith("SyntaxError: ")
    assert errors["entry point clash (plugin_test_clash)"] == (
        "AlreadyRegistered: A hook named 'require_fields' is already registered (RequireFields)."
    )


def test_a_broken_module_is_a_start_up_warning_not_a_failure(third_party):
    apps.discover_hooks()

    warnings = [m for m in run_checks() if m.id == "stash.W001"]

    assert [w.msg for w in warnings if "plugin_test_broken" in w.msg] == [
        (
            "Hooks from entry point broken (plugin_test_broken) could not be loaded: "
            "ModuleNotFoundError: No module named 'this_module_does_not_exist'"
        )
    ]
    assert len(warnings) == 3
    assert all(w.hint == "Fix or uninstall that module; the other hooks are loaded." for w in warnings)
    assert not any(m.is_serious() for m in run_checks() if m.id.startswith("stash."))


def test_a_bad_webhook_allowlist_is_a_start_up_error(settings):
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = ["10.0.0.0/8", "intranet"]

    [error] = [m for m in run_checks() if m.id == "stash.E001"]

    assert error.msg == "STASH_WEBHOOK_ALLOWED_NETWORKS: 'intranet' is not an IP address or network (e.g. 10.0.0.0/8)."


def test_a_per_process_cache_is_a_start_up_warning(settings):
    assert [m for m in run_checks() if m.id == "stash.W002"] == []  # the default settings share their cache

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

    [warning] = [m for m in run_checks() if m.id == "stash.W002"]
    assert "rate_limit hooks count each worker's submissions apart" in warning.msg


# --- stash.core.testing ----------------------------------------------------------------------------


class Upper(hooks.Transform):
    """Upper-case the text."""

    def transform(self, item):
        return {**item.payload, "text": item.payload["text"].upper()}


def test_run_hook_takes_a_class_and_shows_what_production_records():
    result = run_hook(Upper, {}, {"text": "hi"})

    assert (result.verdict, result.payload, result.transformed) == ("accepted", {"text": "HI"}, True)
    assert (result.trail[0].outcome, result.trail[0].message) == ("transformed", "changed text")

    failed = run_hook(Upper, {}, {"title": "no text"})
    assert (failed.verdict, failed.trail[0].outcome, failed.reason) == ("rejected", "error", "Upper: KeyError: 'text'")


def test_run_hook_passes_item_fields_and_a_timeout():
    result = run_hook("condition", {"expression": 'meta.submitted_by == "7"'}, {}, submitted_by="7")
    assert result.code == "condition"

    slow = run_hook("test_sleep", {"seconds": 1}, {"sleep": True}, timeout=0.05)
    assert (slow.verdict, slow.trail[0].outcome) == ("rejected", "timeout")


def test_build_hook_refuses_unknown_names_and_bad_params():
    with pytest.raises(NotRegistered, match="No hook named 'nope' is registered"):
        build_hook("nope", {})
    with pytest.raises(InvalidParams, match=r"fields: This field is required\."):
        build_hook("require_fields", {})
    assert build_hook("require_fields", {"fields": ["a"]}).filter(pipeline.Item(payload={"a": 1})) == pipeline.keep()


def test_run_hook_refuses_a_sink_and_send_event_takes_it():
    with pytest.raises(TypeError, match="call a sink with send_event"):
        run_hook("log", {}, {})
    assert send_event("log", {"events": ["accept"]}, "on_reject", {}) is False


def test_register_temporarily_registers_for_the_block_only():
    with register_temporarily("plugin_test.upper", Upper) as cls:
        assert cls is Upper
        assert run_hook("plugin_test.upper", {}, {"text": "a"}).payload == {"text": "A"}

    assert not registry.is_registered("plugin_test.upper")


def test_register_temporarily_unregisters_after_an_error():
    with pytest.raises(RuntimeError, match="in the block"):
        with register_temporarily("plugin_test.upper", Upper):
            raise RuntimeError("in the block")

    assert not registry.is_registered("plugin_test.upper")


# --- the documentation's examples run ---------------------------------------------------------


def doc_blocks():
    return re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "hooks.md").read_text(), flags=re.DOTALL)


def test_the_docs_hook_and_its_tests_run():
    hook_source, tests_source = [b for b in doc_blocks() if "no_shouting" in b]
    try:
        exec(compile(hook_source, "docs/hooks.md", "exec"), {})  # noqa: S102 - the docs' own example
        namespace = {}
        exec(compile(tests_source, "docs/hooks.md", "exec"), namespace)  # noqa: S102 - the docs' own example
        tests = [f for name, f in namespace.items() if name.startswith("test_")]
        assert len(tests) == 3
        for test in tests:
            test()
    finally:
        if registry.is_registered("no_shouting"):
            registry.unregister("no_shouting")


def test_the_docs_signature_check_verifies_what_the_webhook_signs():
    [source] = [b for b in doc_blocks() if "def verified" in b]
    namespace = {}
    exec(compile(source, "docs/hooks.md", "exec"), namespace)  # noqa: S102 - the docs' own example
    body = b'{"event":"accept"}'

    assert namespace["verified"](body, signature("s" * 16, body), "s" * 16)
    assert not namespace["verified"](body + b" ", signature("s" * 16, body), "s" * 16)
