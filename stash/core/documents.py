"""A stash's pipeline as one JSON document, and what changed between two of them.

    {"format": "stash.pipeline", "format_version": 1,
     "stash": {"slug": "audit", "name": "Audit", ..., "examples_policy": "block"},
     "hooks": [{"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]},
                "enabled": true, "mode": "enforce", "position": 1, "on_error": "inherit",
                "condition": "", "timeout_ms": 2000, "cache_seconds": 0,
                "min_precision": null, "min_precision_count": 20}, ...],
     "examples": [{"name": "plain text", "payload": {"text": "hi"}, "verdict": "accepted",
                   "reason_code": "", "hook": "", "service_answers": {}}, ...]}

A version (``PipelineVersion.document``) is the same without ``examples``, each hook with its
config ``id`` and its params with their secrets; an export has neither ids nor secrets. Plain
data in, plain data out: this module reads attributes and compares dicts, nothing more.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from stash.core import registry

FORMAT = "stash.pipeline"
FORMAT_VERSION = 1

#: The stash's settings a document carries (its ``slug`` says where it came from; an import never renames).
STASH_FIELDS = (
    "slug",
    "name",
    "description",
    "is_active",
    "allow_anonymous",
    "on_error",
    "max_payload_bytes",
    "max_waiting",
    "queue",
    "examples_policy",
    "statement_policy",
    "appeal_days",
    "review_priority",
    "review_hours",
    "review_expire_hours",
    "review_expire_action",
    "four_eyes_reasons",
)
#: Each hook's fields, in the order a document lists them.
HOOK_FIELDS = (
    "hook",
    "label",
    "params",
    "enabled",
    "mode",
    "position",
    "on_error",
    "condition",
    "timeout_ms",
    "cache_seconds",
    "min_precision",
    "min_precision_count",
)
#: The value a hook field has when a document (from before the field) leaves it out.
HOOK_DEFAULTS: dict[str, Any] = {"cache_seconds": 0, "min_precision": None, "min_precision_count": 20}
#: Each golden example's fields.
EXAMPLE_FIELDS = ("name", "payload", "verdict", "reason_code", "hook", "service_answers")
#: The value an example field has when a document leaves it out (the text fields: blank).
EXAMPLE_DEFAULTS: dict[str, Any] = {"service_answers": {}}


def pipeline_document(stash: Any, configs: Iterable[Any], *, ids: bool = False) -> dict[str, Any]:
    """The document of ``stash`` with its hook ``configs`` (in run order); ``ids`` adds each config's id."""
    hooks = []
    for config in configs:
        hook = {name: _plain(getattr(config, name)) for name in HOOK_FIELDS}
        hooks.append({"id": config.pk, **hook} if ids else hook)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "stash": {name: getattr(stash, name) for name in STASH_FIELDS},
        "hooks": hooks,
    }


def example_entries(examples: Iterable[Any]) -> list[dict[str, Any]]:
    """Golden examples as a document lists them."""
    return [{name: _plain(getattr(example, name)) for name in EXAMPLE_FIELDS} for example in examples]


def example_field(entry: dict[str, Any], name: str) -> Any:
    """An example field of a document's ``entry``, or the value it has when the entry leaves it out."""
    return entry.get(name, EXAMPLE_DEFAULTS.get(name, ""))


def _plain(value: Any) -> Any:
    # Model choices are str subclasses: a document holds plain JSON values.
    return str(value) if isinstance(value, str) else value


def title(hook: dict[str, Any]) -> str:
    """How a hook of a document is called: its label, or its hook's name."""
    return str(hook.get("label") or hook.get("hook") or "?")


def pair_hooks(
    old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Match the hooks of two documents: by ``id`` where both have one, else by the same hook
    name and label, first come first served. Returns (pairs of (old index, new index), old
    indexes left unmatched (removed), new indexes left unmatched (added))."""
    pairs: list[tuple[int, int]] = []
    free_old = list(range(len(old)))
    unmatched_new = []
    by_id = {hook["id"]: index for index, hook in enumerate(old) if hook.get("id") is not None}
    for index, hook in enumerate(new):
        match = by_id.get(hook.get("id")) if hook.get("id") is not None else None
        if match is not None and match in free_old:
            pairs.append((match, index))
            free_old.remove(match)
        else:
            unmatched_new.append(index)
    added = []
    for index in unmatched_new:
        hook = new[index]
        match = next(
            (
                o
                for o in free_old
                if old[o].get("hook") == hook.get("hook") and (old[o].get("label") or "") == (hook.get("label") or "")
            ),
            None,
        )
        if match is None:
            added.append(index)
        else:
            pairs.append((match, index))
            free_old.remove(match)
    return sorted(pairs, key=lambda pair: pair[1]), free_old, added


def changes(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """What changed from ``old`` to ``new``, one short phrase each, in the order of the document,
    each saying what the thing became: ``No spam disabled``, ``No spam: max_bytes 1000 → 2000``,
    ``stash on_error reject → accept``, ``order: Needs text, No spam``. A secret param is named,
    never shown (``Notify: token changed (secret, not shown)``)."""
    if old is None:
        return []
    said = []
    old_stash, new_stash = old.get("stash", {}), new.get("stash", {})
    said += [
        f"stash {name} {_became(old_stash.get(name, _UNSET), new_stash.get(name, _UNSET))}"
        for name in STASH_FIELDS
        if old_stash.get(name) != new_stash.get(name)
    ]
    old_hooks, new_hooks = old.get("hooks", []), new.get("hooks", [])
    pairs, removed, added = pair_hooks(old_hooks, new_hooks)
    said += [f"removed {title(old_hooks[index])}" for index in removed]
    said += [f"added {title(new_hooks[index])}" for index in added]
    for before, after in pairs:
        said += _hook_changes(old_hooks[before], new_hooks[after])
    kept_order = [before for before, _after in pairs]
    if kept_order != sorted(kept_order):
        said.append("order: " + ", ".join(title(hook) for hook in new_hooks))
    return said


#: A field or param that one of two documents leaves out.
_UNSET = object()
#: The longest a value is shown in a phrase of ``changes`` (longer ones end in "…").
_SHOWN_CHARS = 40


def _hook_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What changed of one hook, as ``changes`` says it: its enabling on its own (``No spam disabled``),
    then each other field, params key by key (``No spam: max_bytes 1000 → 2000, mode enforce → observe``)."""
    said, edits = [], []
    for name in HOOK_FIELDS:
        before, after = old.get(name, HOOK_DEFAULTS.get(name)), new.get(name, HOOK_DEFAULTS.get(name))
        if name == "position" or before == after:
            continue
        if name == "enabled":
            said.append(f"{title(new)} {'enabled' if after else 'disabled'}")
        elif name == "params" and isinstance(before, dict) and isinstance(after, dict):
            edits += _param_changes(str(new.get("hook", "")), before, after)
        else:
            edits.append(f"{name} {_became(before, after)}")
    if edits:
        said.append(f"{title(new)}: {', '.join(edits)}")
    return said


def _param_changes(hook: str, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Each param that differs, in the order of ``new`` (then those it dropped); a secret one (its
    hook's schema says ``writeOnly``; every one of a hook not registered) named, its value never shown."""
    secret = registry.secret_keys(hook, {**old, **new})
    said = []
    for key in [*new, *(key for key in old if key not in new)]:
        before, after = old.get(key, _UNSET), new.get(key, _UNSET)
        if before == after:
            continue
        said.append(f"{key} changed (secret, not shown)" if key in secret else f"{key} {_became(before, after)}")
    return said


def _became(before: Any, after: Any) -> str:
    """``1000 → 2000``; ``unset → 2000`` where the first document leaves it out."""
    return f"{_shown(before)} → {_shown(after)}"


def _shown(value: Any) -> str:
    """A value as a phrase of ``changes`` shows it: a word as it is, anything else as compact JSON, cut short."""
    if value is _UNSET:
        return "unset"
    if value is None:
        return "none"
    if isinstance(value, str) and value and len(value.split()) == 1 and value.isprintable():
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def summary(old: dict[str, Any] | None, new: dict[str, Any], note: str = "") -> str:
    """One line: ``note`` and what changed from ``old`` (None: this is the first version)."""
    count = len(new.get("hooks", []))
    said = changes(old, new) if old is not None else [f"created with {count} hook{'' if count == 1 else 's'}"]
    text = "; ".join(said) or "no change"
    return f"{note}: {text}" if note else text


def diff_lines(old: dict[str, Any], new: dict[str, Any], old_name: str = "a", new_name: str = "b") -> list[str]:
    """A unified diff of the two documents as indented JSON."""
    return list(difflib.unified_diff(dumps(old).splitlines(), dumps(new).splitlines(), old_name, new_name, lineterm=""))


def dumps(document: dict[str, Any]) -> str:
    """A document as people read and diff it: indented JSON, its keys in the format's order (a
    database's JSON column may store them in another: PostgreSQL's jsonb does)."""
    return json.dumps(in_order(document), indent=2, ensure_ascii=False)


def in_order(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with its keys, its stash's and each hook's and example's in the order this
    module lists them (any other key after them, as it came)."""
    ordered = _ordered(document, ("format", "format_version", "stash", "hooks", "examples"))
    if isinstance(ordered.get("stash"), dict):
        ordered["stash"] = _ordered(ordered["stash"], STASH_FIELDS)
    for key, fields in (("hooks", ("id", *HOOK_FIELDS)), ("examples", EXAMPLE_FIELDS)):
        if isinstance(ordered.get(key), list):
            ordered[key] = [_ordered(entry, fields) if isinstance(entry, dict) else entry for entry in ordered[key]]
    return ordered


def _ordered(entry: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    return {**{key: entry[key] for key in keys if key in entry}, **entry}
