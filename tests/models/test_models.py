"""The models' own rules: HookConfig validation, positions and config versions; Content revisions."""

import functools

import pytest
from django.core.exceptions import ValidationError
from django.db.models import F

from stash import hooks
from stash.core import registry
from stash.models import Content, HookConfig, Stash, content_hash

pytestmark = pytest.mark.django_db


@pytest.fixture
def stash(make_stash):
    return make_stash("audit")


def version(stash):
    return Stash.objects.values_list("config_version", flat=True).get(pk=stash.pk)


def positions(stash):
    return list(HookConfig.objects.filter(stash=stash).in_order().values_list("pk", "position"))


class Vanishing(hooks.Filter):
    """Keep everything (registered for one test, then gone)."""

    params_schema = {"type": "object", "properties": {"level": {"type": "integer"}}, "additionalProperties": False}

    def filter(self, item):
        return self.keep()


# --- HookConfig: validation ------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, field, message",
    [
        ({"fields": "time"}, "fields", r"fields: Must be a list\."),
        ({"fields": []}, "fields", r"fields: Must not be empty\."),
        ({}, "fields", r"fields: This field is required\."),  # on the field it is about
        ({"fields": ["time"], "colour": "red"}, "params", r"params: Not a param of this hook: colour\."),
    ],
)
def test_full_clean_rejects_params_that_break_the_hooks_schema(stash, params, field, message):
    config = HookConfig(stash=stash, hook="require_fields", params=params)
    with pytest.raises(ValidationError) as excinfo:
        config.full_clean()
    errors = excinfo.value.message_dict
    assert list(errors) == ["params"]
    assert errors["params"][0].startswith("Invalid params for hook 'require_fields': ")
    assert f"{field}: " in errors["params"][0]
    assert excinfo.match(message)


def test_save_rejects_params_that_break_the_schema_and_saves_nothing(stash):
    before = version(stash)
    with pytest.raises(ValidationError, match=r"max_bytes: Must be at least 1.") as excinfo:
        HookConfig.objects.create(stash=stash, hook="max_size", params={"max_bytes": 0})
    assert "max_bytes" in excinfo.value.message_dict["params"][0]
    assert HookConfig.objects.count() == 0
    assert version(stash) == before


def test_save_rejects_a_changed_params_that_breaks_the_schema_and_keeps_the_stored_one(stash):
    config = HookConfig.objects.create(stash=stash, hook="keyword_blocklist", params={"words": ["spam"]})
    config = HookConfig.objects.get(pk=config.pk)
    config.params = {"words": "spam"}
    with pytest.raises(ValidationError) as excinfo:
        config.save()
    assert excinfo.value.message_dict["params"] == [
        "Invalid params for hook 'keyword_blocklist': words: Must be a list."
    ]
    assert HookConfig.objects.get(pk=config.pk).params == {"words": ["spam"]}


def test_an_unknown_hook_name_is_refused_on_hook_and_nothing_is_saved(stash):
    config = HookConfig(stash=stash, hook="no_such_hook", params={})
    with pytest.raises(ValidationError) as excinfo:
        config.full_clean()
    assert excinfo.value.message_dict == {"hook": ["'no_such_hook' is not a registered hook."]}
    with pytest.raises(ValidationError, match="'no_such_hook' is not a registered hook"):
        config.save()
    with pytest.raises(ValidationError, match="is not a registered hook"):
        HookConfig.objects.create(stash=stash, hook="os.system")
    assert HookConfig.objects.count() == 0


@pytest.mark.parametrize(
    "condition, message",
    [
        ('__import__("os")', r"calls unknown function\(s\) __import__"),
        ("foo.bar", r"reads unknown name\(s\) foo: only payload and meta are available"),
        ("payload.text ==", r"does not parse"),
        ("x" * 1001, r"1001 characters long; the limit is 1000"),
    ],
)
def test_an_invalid_or_unsafe_condition_is_refused_on_condition(stash, condition, message):
    config = HookConfig(stash=stash, hook="require_fields", params={"fields": ["text"]}, condition=condition)
    with pytest.raises(ValidationError) as excinfo:
        config.full_clean()
    assert list(excinfo.value.message_dict) == ["condition"]
    assert excinfo.match(message)
    with pytest.raises(ValidationError, match=message):
        config.save()
    assert HookConfig.objects.count() == 0


def test_a_valid_condition_is_saved(stash):
    config = HookConfig(
        stash=stash,
        hook="require_fields",
        params={"fields": ["text"]},
        condition="has(payload.data) && payload.data.probability > 0.5",
    )
    config.full_clean()
    config.save()
    assert HookConfig.objects.get().condition == "has(payload.data) && payload.data.probability > 0.5"


def test_every_invalid_field_is_reported_at_once(stash):
    config = HookConfig(stash=stash, hook="max_size", params={"max_bytes": "big"}, condition="foo")
    with pytest.raises(ValidationError) as excinfo:
        config.full_clean()
    assert sorted(excinfo.value.message_dict) == ["condition", "params"]
    assert "max_bytes: Must be a whole number." in excinfo.value.message_dict["params"][0]


def test_a_config_whose_hook_was_unregistered_can_still_be_disabled_and_relabelled(stash):
    registry.register("test_vanishing", Vanishing)
    try:
        config = HookConfig.objects.create(stash=stash, hook="test_vanishing", params={"level": 1})
    finally:
        registry.unregister("test_vanishing")

    stored = HookConfig.objects.get(pk=config.pk)
    assert stored.is_missing
    stored.enabled = False
    stored.label = "Gone, disabled"
    stored.full_clean()  # the admin's path: an untouched missing hook is not an error
    stored.save()
    stored = HookConfig.objects.get(pk=config.pk)
    assert (stored.enabled, stored.label, stored.params) == (False, "Gone, disabled", {"level": 1})

    # Changing what it does is a new configuration, and that must name a registered hook.
    stored.params = {"level": 2}
    with pytest.raises(ValidationError, match="'test_vanishing' is not a registered hook"):
        stored.full_clean()
    with pytest.raises(ValidationError, match="'test_vanishing' is not a registered hook"):
        stored.save()
    assert HookConfig.objects.get(pk=config.pk).params == {"level": 1}


# --- HookConfig: positions and reordering ----------------------------------------------------


def test_new_configs_are_appended_in_order(make_stash):
    stash = make_stash(
        "audit",
        hooks=[
            ("require_fields", {"fields": ["a"]}),
            ("max_size", {"max_bytes": 10}),
            ("keyword_blocklist", {"words": ["x"]}),
        ],
    )
    assert list(stash.hooks.in_order().values_list("hook", "position")) == [
        ("require_fields", 1),
        ("max_size", 2),
        ("keyword_blocklist", 3),
    ]
    other = make_stash("other", hooks=[("max_size", {"max_bytes": 10})])
    assert other.hooks.get().position == 1  # numbering is per stash


def test_appending_after_a_delete_continues_after_the_last_position(make_stash):
    stash = make_stash("audit", hooks=[("max_size", {"max_bytes": n}) for n in (1, 2, 3)])
    stash.hooks.get(position=2).delete()
    added = HookConfig.objects.create(stash=stash, hook="max_size", params={"max_bytes": 4})
    assert added.position == 4
    assert list(stash.hooks.in_order().values_list("position", flat=True)) == [1, 3, 4]


@pytest.fixture
def three(make_stash):
    return make_stash(
        "audit",
        hooks=[
            ("require_fields", {"fields": ["a"]}),
            ("max_size", {"max_bytes": 10}),
            ("keyword_blocklist", {"words": ["x"]}),
        ],
    )


def test_reorder_renumbers_1_to_n_in_the_given_order(three):
    first, second, third = three.hooks.in_order()
    before = version(three)
    HookConfig.objects.reorder(three, [third.pk, first.pk, second.pk])
    assert positions(three) == [(third.pk, 1), (first.pk, 2), (second.pk, 3)]
    assert version(three) > before

    HookConfig.objects.reorder(three, [str(second.pk), str(third.pk), str(first.pk)])  # ids as posted in a form
    assert positions(three) == [(second.pk, 1), (third.pk, 2), (first.pk, 3)]


def test_reorder_closes_gaps(three):
    first, second, third = three.hooks.in_order()
    second.delete()
    HookConfig.objects.reorder(three, [third.pk, first.pk])
    assert positions(three) == [(third.pk, 1), (first.pk, 2)]


@pytest.mark.parametrize(
    "order",
    [
        pytest.param(lambda a, b, c, other: [a, b], id="omits"),
        pytest.param(lambda a, b, c, other: [a, b, b, c], id="repeats"),
        pytest.param(lambda a, b, c, other: [a, b, c, a], id="repeats-all-present"),
        pytest.param(lambda a, b, c, other: [a, b, c, other], id="adds-another-stash's"),
        pytest.param(lambda a, b, c, other: [a, b, c, 999_999], id="adds-unknown"),
        pytest.param(lambda a, b, c, other: [], id="empty"),
    ],
)
def test_reorder_refuses_an_order_that_does_not_list_every_hook_once(three, make_stash, order):
    other = make_stash("other", hooks=[("max_size", {"max_bytes": 1})]).hooks.get()
    a, b, c = (config.pk for config in three.hooks.in_order())
    before, before_version = positions(three), version(three)
    with pytest.raises(ValidationError, match="must list every hook of the stash exactly once"):
        HookConfig.objects.reorder(three, order(a, b, c, other.pk))
    assert positions(three) == before
    assert version(three) == before_version
    assert HookConfig.objects.get(pk=other.pk).position == 1


# --- HookConfig: config_version --------------------------------------------------------------


def test_every_change_to_a_config_bumps_the_stash_config_version(stash, make_stash):
    other = make_stash("other")
    steps = []

    def bumped(action):
        before, other_before = version(stash), version(other)
        action()
        steps.append(version(stash) - before)
        assert version(other) == other_before, "another stash's version moved"

    holder = {}
    bumped(
        lambda: holder.update(config=HookConfig.objects.create(stash=stash, hook="max_size", params={"max_bytes": 5}))
    )
    config = holder["config"]
    bumped(lambda: HookConfig.objects.create(stash=stash, hook="max_size", params={"max_bytes": 6}))

    def edit():
        config.params = {"max_bytes": 50}
        config.save()

    bumped(edit)

    def relabel():
        config.label = "Small"
        config.save()

    bumped(relabel)
    bumped(lambda: HookConfig.objects.filter(pk=config.pk).update(enabled=False))
    bumped(lambda: HookConfig.objects.filter(pk=config.pk).update(enabled=True, runs_count=F("runs_count") + 1))
    bumped(lambda: HookConfig.objects.filter(pk=config.pk).update(condition="payload.text != ''"))
    bumped(lambda: HookConfig.objects.get(pk=config.pk).delete())
    bumped(lambda: HookConfig.objects.filter(stash=stash).delete())
    assert all(step >= 1 for step in steps), steps
    assert HookConfig.objects.filter(stash=stash).count() == 0


def test_a_counter_only_update_does_not_bump_the_config_version(stash):
    config = HookConfig.objects.create(stash=stash, hook="max_size", params={"max_bytes": 5})
    before = version(stash)
    rows = HookConfig.objects.filter(pk=config.pk).update(
        runs_count=F("runs_count") + 3, kept_count=2, dropped_count=1, errors_count=0, time_total_us=900
    )
    assert rows == 1
    assert version(stash) == before
    config.refresh_from_db()
    assert (config.runs_count, config.kept_count, config.dropped_count, config.time_total_us) == (3, 2, 1, 900)


def test_a_stale_instance_saved_after_a_reorder_keeps_the_new_order_and_the_counters(three):
    first, second, third = three.hooks.in_order()
    stale = HookConfig.objects.get(pk=first.pk)  # e.g. an admin form opened before the reorder
    HookConfig.objects.reorder(three, [second.pk, third.pk, first.pk])
    HookConfig.objects.filter(pk=first.pk).update(runs_count=F("runs_count") + 7, dropped_count=2)

    stale.label = "Renamed"
    stale.params = {"fields": ["a", "b"]}
    stale.save()

    assert positions(three) == [(second.pk, 1), (third.pk, 2), (first.pk, 3)]
    fresh = HookConfig.objects.get(pk=first.pk)
    assert (fresh.label, fresh.params) == ("Renamed", {"fields": ["a", "b"]})
    assert (fresh.runs_count, fresh.dropped_count) == (7, 2)


def test_an_explicit_move_of_a_loaded_instance_is_written(three):
    first, second, third = three.hooks.in_order()
    third.delete()
    moved = HookConfig.objects.get(pk=first.pk)
    moved.position = 5
    moved.save()
    assert positions(three) == [(second.pk, 2), (first.pk, 5)]


# --- Content ---------------------------------------------------------------------------------


@pytest.mark.parametrize("payload, kind", [([1, 2], "list"), ("text", "str"), (None, "NoneType"), (3, "int")])
def test_a_payload_that_is_not_an_object_is_refused_and_nothing_saved(stash, payload, kind):
    with pytest.raises(ValidationError) as excinfo:
        Content.objects.create(stash=stash, payload=payload)
    assert excinfo.value.message_dict == {"payload": [f"The payload must be a JSON object, not {kind}."]}
    assert Content.objects.count() == 0


def test_changing_a_stored_payload_to_a_non_object_is_refused(stash):
    item = Content.objects.create(stash=stash, payload={"text": "hi"})
    item.payload = ["hi"]
    with pytest.raises(ValidationError, match="must be a JSON object, not list"):
        item.save()
    stored = Content.objects.get(pk=item.pk)
    assert (stored.payload, stored.revision) == ({"text": "hi"}, 1)


def test_full_clean_enforces_the_stash_max_payload_bytes(make_stash):
    stash = make_stash("small", max_payload_bytes=20)
    fits = Content(stash=stash, payload={"text": "x" * 9})  # {"text":"xxxxxxxxx"} is 20 bytes
    fits.full_clean()
    too_big = Content(stash=stash, payload={"text": "x" * 10})
    with pytest.raises(ValidationError) as excinfo:
        too_big.full_clean()
    assert excinfo.value.message_dict == {"payload": ["The payload is 21 bytes; this stash takes at most 20."]}
    assert Content.objects.count() == 0


def test_a_new_item_is_pending_at_revision_1_with_a_content_hash(stash):
    item = Content.objects.create(stash=stash, payload={"text": "hi", "n": 1})
    stored = Content.objects.get(pk=item.pk)
    assert (stored.status, stored.revision, stored.processed_revision, stored.attempts) == ("pending", 1, None, 0)
    assert stored.content_hash == content_hash({"text": "hi", "n": 1})
    assert len(stored.content_hash) == 64 and int(stored.content_hash, 16) >= 0
    assert stored.lease_until is not None  # the sweeper's safety net from the first moment


def test_changing_the_payload_bumps_the_revision_and_sets_the_item_pending_again(stash):
    item = Content.objects.create(stash=stash, payload={"text": "hi"})
    Content.objects.filter(pk=item.pk).update(
        status="rejected", reason="missing time", processed_revision=1, attempts=1, lease_until=None
    )
    edited = Content.objects.get(pk=item.pk)
    edited.payload = {"text": "hi", "time": "1"}
    edited.save()
    assert edited.revision == 2
    stored = Content.objects.get(pk=item.pk)
    assert (stored.status, stored.reason, stored.revision, stored.attempts) == ("pending", "", 2, 0)
    assert stored.content_hash == content_hash({"text": "hi", "time": "1"})
    assert stored.content_hash != item.content_hash
    assert stored.lease_until is not None

    edited.payload = {"text": "again"}
    edited.save()
    assert Content.objects.get(pk=item.pk).revision == edited.revision == 3


def test_a_save_with_an_unchanged_payload_keeps_the_revision_and_the_workers_fields(stash):
    item = Content.objects.create(stash=stash, payload={"text": "hi"})
    stale = Content.objects.get(pk=item.pk)  # loaded before the worker's verdict
    Content.objects.filter(pk=item.pk).update(
        status="accepted", processed_revision=1, queue_seq=1, attempts=1, reason=""
    )

    stale.source = Content.Source.ADMIN
    stale.save()

    stored = Content.objects.get(pk=item.pk)
    assert (stored.status, stored.revision, stored.processed_revision, stored.queue_seq, stored.attempts) == (
        "accepted",
        1,
        1,
        1,
        1,
    )
    assert stored.source == "admin"


def test_an_equal_payload_in_another_key_order_is_unchanged(stash):
    item = Content.objects.create(stash=stash, payload={"a": 1, "b": {"x": 1, "y": 2}})
    Content.objects.filter(pk=item.pk).update(status="accepted", processed_revision=1)
    loaded = Content.objects.get(pk=item.pk)
    loaded.payload = {"b": {"y": 2, "x": 1}, "a": 1}
    loaded.save()
    stored = Content.objects.get(pk=item.pk)
    assert (stored.status, stored.revision) == ("accepted", 1)


def test_a_refreshed_instance_saved_unchanged_keeps_the_verdict(stash):
    item = Content.objects.create(stash=stash, payload={"text": "hi"})
    # The worker stores a transformed payload with its verdict.
    Content.objects.filter(pk=item.pk).update(
        status="accepted", processed_revision=1, payload={"text": "HI"}, original_payload={"text": "hi"}
    )
    item.refresh_from_db()
    item.source = Content.Source.ADMIN
    item.save()
    stored = Content.objects.get(pk=item.pk)
    assert (stored.status, stored.revision, stored.payload, stored.source) == ("accepted", 1, {"text": "HI"}, "admin")


def test_equal_payloads_have_equal_hashes_whatever_the_key_order(stash):
    one = Content.objects.create(stash=stash, payload={"a": 1, "b": [1, 2], "c": {"x": "é", "y": None}})
    two = Content.objects.create(stash=stash, payload={"c": {"y": None, "x": "é"}, "b": [1, 2], "a": 1})
    three = Content.objects.create(stash=stash, payload={"a": 1, "b": [2, 1], "c": {"x": "é", "y": None}})
    assert one.content_hash == two.content_hash
    assert one.content_hash != three.content_hash  # list order matters
    assert Content.objects.filter(content_hash=one.content_hash).count() == 2
    assert content_hash({"a": 1}) != content_hash({"a": "1"})


def test_a_payload_edited_in_place_is_a_change(stash):
    item = Content.objects.create(stash=stash, payload={"text": "hi", "data": {"n": 1}})
    Content.objects.filter(pk=item.pk).update(status="accepted", processed_revision=1)
    loaded = Content.objects.get(pk=item.pk)
    loaded.payload["data"]["n"] = 2
    loaded.save()
    stored = Content.objects.get(pk=item.pk)
    assert (stored.status, stored.revision, stored.payload) == ("pending", 2, {"text": "hi", "data": {"n": 2}})
    assert stored.content_hash == content_hash({"text": "hi", "data": {"n": 2}})


def test_params_edited_in_place_are_validated(stash):
    config = HookConfig.objects.create(stash=stash, hook="keyword_blocklist", params={"words": ["spam"]})
    loaded = HookConfig.objects.get(pk=config.pk)
    loaded.params["words"].append(7)
    with pytest.raises(ValidationError, match=r"words\.1: Must be text."):
        loaded.save()
    assert HookConfig.objects.get(pk=config.pk).params == {"words": ["spam"]}
    config.params["words"].append("scam")  # the instance that created it, edited in place
    config.save()
    assert HookConfig.objects.get(pk=config.pk).params == {"words": ["spam", "scam"]}


@pytest.mark.parametrize(
    "payload, message",
    [
        ({"text": "a\x00b"}, "NUL character"),
        ({"text": "\ud800"}, "unpaired surrogate"),
        ({"score": float("inf")}, "too large for JSON"),
        ({"n": -(10**1000)}, "integer of more than 1000 digits"),
        ({"deep": functools.reduce(lambda inner, _: {"x": inner}, range(120), {})}, "deeper than 100"),
    ],
)
def test_a_payload_no_database_can_store_is_refused_on_every_path(make_stash, payload, message):
    stash = make_stash("s")
    with pytest.raises(ValidationError, match=message):
        Content.objects.create(stash=stash, payload=payload)
    assert not Content.objects.exists()


def test_deleting_a_hook_config_keeps_the_items_it_decided(make_stash):
    stash = make_stash("d", hooks=[("require_fields", {"fields": ["time"]})])
    config = stash.hooks.get()
    item = Content.objects.create(stash=stash, payload={"text": "x"})
    Content.objects.filter(pk=item.pk).update(status="rejected", decided_by=config)

    HookConfig.objects.filter(pk=config.pk).delete()

    item.refresh_from_db()
    assert (item.status, item.decided_by) == ("rejected", None)
    assert not HookConfig.objects.exists()


def test_a_payload_with_the_longest_integer_allowed_is_stored(make_stash):
    payload = {"n": 10**1000 - 1, "pad": 2**63}
    item = Content.objects.create(stash=make_stash("s"), payload=payload)
    assert Content.objects.get(pk=item.pk).payload == payload


@pytest.mark.parametrize(
    "fields, field, message",
    [
        ({"params": {"words": ["\ud800"]}}, "params", "The params contains an unpaired surrogate"),
        ({"params": {"words": ["a\x00"]}}, "params", "The params contains a NUL character"),
        ({"condition": "payload.text == '\x00'"}, "condition", "The condition contains a NUL character"),
        ({"condition": "payload.text == '\udfff'"}, "condition", "The condition contains an unpaired surrogate"),
    ],
)
def test_hook_settings_no_database_can_store_are_refused_by_field(stash, fields, field, message):
    config = HookConfig(stash=stash, hook="keyword_blocklist", **{"params": {"words": ["spam"]}, **fields})
    with pytest.raises(ValidationError) as refused:
        config.save()
    assert refused.value.message_dict[field][0].startswith(message)
    assert not HookConfig.objects.exists()


def test_saving_a_hook_config_deleted_meanwhile_says_so_and_brings_nothing_back(stash):
    config = HookConfig.objects.create(stash=stash, hook="keyword_blocklist", params={"words": ["spam"]})
    stale = HookConfig.objects.get(pk=config.pk)
    config.delete()
    stale.label = "renamed"
    with pytest.raises(HookConfig.DoesNotExist, match=r"^This hook config was deleted meanwhile\.$"):
        stale.save()
    assert not HookConfig.objects.exists()
