"""The filters and transforms numbered 1..n in run order, the sinks apart: the one rule the stash's page and
the simulate and replay pages number hooks by."""

import pytest

from stash import processing
from stash.admin.hook_groups import in_groups, number_in_groups
from stash.models import HookConfig

pytestmark = pytest.mark.django_db

NOTIFY = {"url": "https://example.com/hooks/stash", "secret": "s3cret-s3cret-s3cret-s3cret"}


@pytest.fixture
def audit(make_stash):
    """A sink between the filters, a disabled filter, an observing one: stored positions 1..5."""
    return make_stash(
        "audit",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "webhook", "label": "Notify", "params": NOTIFY},
            {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}, "enabled": False},
            {"hook": "max_size", "label": "At most 64 KB", "params": {"max_bytes": 65536}, "mode": "observe"},
            {"hook": "webhook", "label": "Archive", "params": NOTIFY, "mode": "observe"},
        ],
    )


def titles(group):
    return [(number, hook.title) for number, hook in group]


def test_enabled_hook_configs_are_numbered_without_gaps_and_the_sinks_set_apart(audit):
    groups = in_groups(audit.hooks.enabled().in_order())
    assert titles(groups.ordered) == [(1, "Needs text"), (2, "At most 64 KB")]
    assert titles(groups.sinks) == [(1, "Notify"), (2, "Archive")]


def test_a_pipelines_steps_are_grouped_as_the_hook_configs_they_were_built_from(audit):
    steps = processing.build_pipeline(audit).steps
    groups = in_groups(steps)
    assert titles(groups.ordered) == [(1, "Needs text"), (2, "At most 64 KB")]
    assert titles(groups.sinks) == [(1, "Notify"), (2, "Archive")]
    assert [hook.mode for _, hook in groups.ordered + groups.sinks] == ["enforce", "observe", "enforce", "observe"]


def test_a_hook_no_longer_registered_is_numbered_with_the_filters():
    groups = in_groups([HookConfig(hook="gone_away", label="Old"), HookConfig(hook="webhook", label="Notify")])
    assert titles(groups.ordered) == [(1, "Old")]
    assert titles(groups.sinks) == [(1, "Notify")]


def test_no_hooks_make_empty_groups():
    assert not in_groups([])
    assert in_groups([HookConfig(hook="webhook")])


def test_the_stash_pages_rows_get_their_numbers_by_the_same_rule(audit):
    configs = list(audit.hooks.in_order())
    number_in_groups(configs)
    assert [
        (c.title, c.is_sink, getattr(c, "order_number", None), getattr(c, "sink_number", None)) for c in configs
    ] == [
        ("Needs text", False, 1, None),
        ("Notify", True, None, 1),
        ("No spam", False, 2, None),
        ("At most 64 KB", False, 3, None),
        ("Archive", True, None, 2),
    ]
