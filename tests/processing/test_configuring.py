"""Changing a stash's hooks in processing (what the admin's saves and actions call): the stash lock
taken first, positions always 1..n, config_version moved only by a change."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from stash import processing
from stash.models import Content, HookConfig, Stash

from ..admin.test_admin import HOOKS
from ..support.threads import concurrently

pytestmark = pytest.mark.django_db


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=HOOKS)


def positions(stash):
    return list(stash.hooks.in_order().values_list("label", "hook", "position"))


def order(stash):
    return [label or hook for label, hook, _position in positions(stash)]


def version(stash):
    stash.refresh_from_db(fields=["config_version"])
    return stash.config_version


def hooks_of(stash, *names):
    return stash.hooks.filter(hook__in=names)


# --- the stash lock ---------------------------------------------------------------------------


# ``Stash.lock``'s query: the stash rows' ids and config versions (then FOR UPDATE, where the database has it).
LOCK = 'SELECT "stash_stash"."id" AS "pk", "stash_stash"."config_version" AS "config_version" FROM "stash_stash" '


def lock_queries(queries):
    """Indexes of the queries that are ``Stash.lock``'s."""
    return [index for index, sql in enumerate(queries) if sql.startswith(LOCK)]


def test_the_lock_returns_config_versions_by_id_in_id_order_and_leaves_out_missing_stashes(audit, make_stash):
    other = make_stash("other")
    with CaptureQueriesContext(connection) as captured:
        versions = Stash.lock([other.pk, audit.pk, audit.pk, 987654])
    assert versions == {audit.pk: version(audit), other.pk: version(other)}
    [sql] = [query["sql"] for query in captured]
    assert sql.startswith(LOCK) and "ORDER BY 1 ASC" in sql  # the rows in id order
    assert sql.endswith("FOR UPDATE") == connection.features.has_select_for_update
    assert Stash.lock([]) == {}


def test_locking_one_stash_answers_its_config_version_or_says_it_is_gone(audit):
    assert Stash.lock_one(audit.pk) == version(audit)
    with pytest.raises(Stash.DoesNotExist, match=r"Stash 987654 does not exist\."):
        Stash.lock_one(987654)


def with_copy(stash):
    processing.duplicate_hooks(hooks_of(stash, "require_fields"))


def edited(stash):
    config = stash.hooks.get(hook="max_size")
    config.label = "Small"
    processing.save_hook(config)


def in_page(stash):
    config = stash.hooks.get(hook="max_size")
    with processing.saving_hooks(stash, {config.pk: 1}):
        config.label = "Small"
        config.save()


CHANGES = {
    "save a new hook": lambda stash: processing.save_hook(
        HookConfig(stash=stash, hook="max_size", params={"max_bytes": 5})
    ),
    "save an edited hook": edited,
    "the stash page": in_page,
    "enable": lambda stash: processing.set_enabled(stash.hooks.all(), False),
    "duplicate": with_copy,
    "move": lambda stash: processing.move_hooks(hooks_of(stash, "max_size"), top=True),
    "delete": lambda stash: processing.delete_hooks(hooks_of(stash, "keyword_blocklist")),
    "place": lambda stash: processing.place_hooks(stash, {stash.hooks.get(hook="max_size").pk: 1}),
    "drag": lambda stash: processing.place_dragged_hooks([[stash.hooks.get(hook="max_size").pk, 1]]),
    "reorder": lambda stash: processing.reorder_hooks(
        stash, stash.hooks.order_by("-position").values_list("pk", flat=True), version(stash)
    ),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_every_change_to_hooks_takes_the_stash_lock_before_its_first_write(audit, change):
    with CaptureQueriesContext(connection) as captured:
        CHANGES[change](audit)
    queries = [query["sql"] for query in captured]
    writes = [index for index, sql in enumerate(queries) if sql.split(" ", 1)[0] in ("INSERT", "UPDATE", "DELETE")]
    assert writes and lock_queries(queries)
    assert lock_queries(queries)[0] < writes[0]


# --- saving -----------------------------------------------------------------------------------


def test_a_saved_new_hook_is_appended_last(audit):
    before = version(audit)
    config = HookConfig(stash=audit, hook="keyword_blocklist", label="No scam", params={"words": ["scam"]})
    processing.save_hook(config)
    assert positions(audit)[-1] == ("No scam", "keyword_blocklist", 4)
    assert version(audit) > before


def test_a_saved_edit_keeps_the_hook_in_its_place(audit):
    config = audit.hooks.get(hook="keyword_blocklist")
    before = version(audit)
    config.params = {"words": ["scam"]}
    processing.save_hook(config)
    assert order(audit) == ["require_fields", "keyword_blocklist", "max_size"]
    assert audit.hooks.get(pk=config.pk).params == {"words": ["scam"]}
    assert version(audit) > before


def test_the_stash_page_places_the_dragged_order_after_its_saves_and_closes_gaps(audit):
    require, blocklist, size = audit.hooks.in_order()
    with processing.saving_hooks(audit, {size.pk: 1, require.pk: 2}):
        blocklist.delete()
        HookConfig.objects.create(stash=audit, hook="keyword_blocklist", label="new", params={"words": ["x"]})
    assert positions(audit) == [("", "max_size", 1), ("", "require_fields", 2), ("new", "keyword_blocklist", 3)]


def test_the_stash_page_without_positions_leaves_the_order_as_saved(audit):
    with processing.saving_hooks(audit):
        audit.hooks.get(hook="require_fields").delete()
    assert [position for _label, _hook, position in positions(audit)] == [2, 3]


# --- enable, duplicate, move, delete ------------------------------------------------------------


def test_enabling_counts_only_the_hooks_that_change(audit):
    before = version(audit)
    assert processing.set_enabled(audit.hooks.all(), False) == 3
    assert not audit.hooks.enabled().exists()
    assert version(audit) > before
    assert processing.set_enabled(hooks_of(audit, "max_size", "require_fields"), True) == 2
    assert processing.set_enabled(audit.hooks.all(), True) == 1
    assert audit.hooks.enabled().count() == 3


def test_each_copy_lands_disabled_right_after_its_original(audit):
    before = version(audit)
    copied = processing.duplicate_hooks(hooks_of(audit, "require_fields", "keyword_blocklist"))
    assert copied == (2, 0)
    assert order(audit) == [
        "require_fields",
        "require_fields (copy)",
        "keyword_blocklist",
        "keyword_blocklist (copy)",
        "max_size",
    ]
    assert [p for _label, _hook, p in positions(audit)] == [1, 2, 3, 4, 5]
    copy = audit.hooks.get(label="keyword_blocklist (copy)")
    assert (copy.hook, copy.params, copy.enabled) == ("keyword_blocklist", {"words": ["spam"]}, False)
    assert version(audit) > before


def test_a_hook_that_is_not_registered_is_not_copied(audit):
    HookConfig.objects.filter(hook="max_size").update(hook="gone_now", label="Gone")
    assert processing.duplicate_hooks(audit.hooks.all()) == (2, 1)
    assert audit.hooks.count() == 5
    assert not audit.hooks.filter(label="Gone (copy)").exists()


def test_moving_to_the_top_or_bottom_keeps_the_selection_in_its_order(audit, make_stash):
    other = make_stash("other", hooks=HOOKS)
    both = HookConfig.objects.filter(hook__in=["keyword_blocklist", "max_size"])
    assert processing.move_hooks(both, top=True) == 4
    for stash in (audit, other):
        assert order(stash) == ["keyword_blocklist", "max_size", "require_fields"]
    assert processing.move_hooks(hooks_of(audit, "keyword_blocklist"), top=False) == 1
    assert [(hook, p) for _label, hook, p in positions(audit)] == [
        ("max_size", 1),
        ("require_fields", 2),
        ("keyword_blocklist", 3),
    ]
    assert order(other) == ["keyword_blocklist", "max_size", "require_fields"]


def test_a_move_that_changes_nothing_leaves_the_config_version(audit):
    before = version(audit)
    assert processing.move_hooks(hooks_of(audit, "require_fields"), top=True) == 1
    assert processing.move_hooks(hooks_of(audit, "max_size"), top=False) == 1
    assert version(audit) == before


def test_deleting_renumbers_each_stash_and_forgets_the_decisions(audit, make_stash):
    other = make_stash("other", hooks=HOOKS)
    blocklist = audit.hooks.get(hook="keyword_blocklist")
    item = Content.objects.create(stash=audit, payload={"text": "spam"})
    Content.objects.filter(pk=item.pk).update(status="rejected", decided_by=blocklist)
    before = version(audit)
    deleted = processing.delete_hooks(
        HookConfig.objects.filter(hook__in=["require_fields", "keyword_blocklist"], stash=audit)
        | HookConfig.objects.filter(hook="max_size", stash=other)
    )
    assert deleted == 3
    assert [(hook, p) for _label, hook, p in positions(audit)] == [("max_size", 1)]
    assert [(hook, p) for _label, hook, p in positions(other)] == [("require_fields", 1), ("keyword_blocklist", 2)]
    assert Content.objects.get(pk=item.pk).decided_by is None
    assert version(audit) > before


# --- drag and drop in the list ----------------------------------------------------------------


def test_a_drop_in_the_list_moves_the_posted_range(audit):
    require, _blocklist, size = audit.hooks.in_order()
    assert processing.place_dragged_hooks([[str(size.pk), 1], [require.pk, "2"]]) == 2
    assert order(audit) == ["max_size", "require_fields", "keyword_blocklist"]


@pytest.mark.parametrize("moved", ["mixed", "unknown", [["x", 1]], [[1]], None])
def test_a_drop_that_is_malformed_or_spans_stashes_changes_nothing(audit, make_stash, moved):
    other = make_stash("other", hooks=HOOKS[:1])
    before = version(audit)
    if moved == "mixed":
        moved = [[audit.hooks.get(hook="max_size").pk, 1], [other.hooks.get().pk, 2]]
    elif moved == "unknown":
        moved = [[987654, 1]]
    with pytest.raises((ValueError, TypeError)):
        processing.place_dragged_hooks(moved)
    assert order(audit) == ["require_fields", "keyword_blocklist", "max_size"]
    assert version(audit) == before


def test_arranging_closes_gaps_and_writes_nothing_when_the_order_stands(audit):
    HookConfig.objects.filter(hook="max_size").update(position=9)
    assert processing.arrange_hooks(audit, lambda current: [pk for pk, _position in current]) is True
    assert [p for _label, _hook, p in positions(audit)] == [1, 2, 3]
    before = version(audit)
    with CaptureQueriesContext(connection) as captured:
        assert processing.place_hooks(audit, {}) is False
    assert not [query for query in captured if query["sql"].startswith("UPDATE")]
    assert version(audit) == before


# --- concurrency ------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_concurrent_copies_moves_and_deletes_leave_positions_one_to_n(make_stash):
    stash = make_stash("busy", hooks=HOOKS * 2)
    originals = list(stash.hooks.in_order().values_list("pk", flat=True))
    copies = HookConfig.objects.filter(stash=stash, label__endswith="(copy)")

    def edit(seed):
        for step in range(3):
            processing.duplicate_hooks(stash.hooks.filter(pk=originals[(seed + step) % len(originals)]))
            processing.move_hooks(copies, top=bool((seed + step) % 2))
            processing.set_enabled(copies, bool(step % 2))

    assert concurrently(edit) == []
    assert sorted(stash.hooks.values_list("position", flat=True)) == list(range(1, 6 + 4 * 3 + 1))
    assert processing.delete_hooks(copies) == 4 * 3
    assert list(stash.hooks.in_order().values_list("pk", "position")) == [
        (pk, position) for position, pk in enumerate(originals, start=1)
    ]
