"""A stash's pipeline as a document: export it, import one (into the same stash, another, or a new
one), restore one of its versions.

    document = export_document(stash)                   # no ids, no secrets; with its examples
    plan = import_document("audit", document, dry_run=True)
    print(plan.changes)                                 # ['No spam: words ["spam"] → ["ham"]', 'added Toxicity']
    plan = import_document("audit", document)           # all or nothing, one config_version bump
    plan = restore(stash, 3)                            # version 3's hooks again, as a new version

An import is checked as the admin checks a save (registry names, params schemas, conditions,
choices), then its hooks are matched to the stash's (by config id for a version's document, else
by hook name and label), so that a matched hook keeps its id, counters and stored secrets; the
rest are removed or added. Before anything is written the stash's golden examples (or the
document's) run against its live version and the new pipeline, with no lock held; a stash that
blocks refuses a change that breaks one (``ExamplesBroken``). The change is then made under the
stash's row lock, in one ``one_change``, if the stash is still what was planned from (else it is
planned and checked again; ``PipelineChanged`` when that keeps happening).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from stash.core import documents, registry
from stash.core.exceptions import StashError
from stash.db.versioning import one_change
from stash.models import Example, HookConfig, PipelineVersion, Stash, unstorable
from stash.processing import limits
from stash.processing.configuring import merge_secrets
from stash.processing.examples import ExampleResult, compare_examples, refuse_if_broken
from stash.processing.guarding import ATTEMPTS, PipelineChanged

_TYPES: dict[str, tuple[type, ...]] = {
    "slug": (str,),
    "name": (str,),
    "description": (str,),
    "is_active": (bool,),
    "allow_anonymous": (bool,),
    "on_error": (str,),
    "max_payload_bytes": (int,),
    "max_waiting": (int, type(None)),
    "queue": (str,),
    "examples_policy": (str,),
    "statement_policy": (dict,),
    "appeal_days": (int,),
    "review_priority": (str,),
    "review_hours": (int,),
    "review_expire_hours": (int,),
    "review_expire_action": (str,),
    "four_eyes_reasons": (list,),
    "id": (int,),
    "hook": (str,),
    "label": (str,),
    "params": (dict,),
    "enabled": (bool,),
    "mode": (str,),
    "position": (int,),
    "condition": (str,),
    "timeout_ms": (int,),
    "cache_seconds": (int,),
    "min_precision": (float, int, type(None)),
    "min_precision_count": (int,),
    "payload": (dict,),
    "verdict": (str,),
    "reason_code": (str,),
    "service_answers": (dict,),
}
_TYPE_NAMES = {
    str: "a string",
    bool: "true or false",
    int: "an integer",
    float: "a number",
    dict: "a JSON object",
    list: "a list",
}

#: What importing any document (or restoring a version) needs: it changes the stash's settings and
#: adds, changes and removes its hooks.
PIPELINE_PERMISSIONS = (
    "stash.change_stash",
    "stash.add_hookconfig",
    "stash.change_hookconfig",
    "stash.delete_hookconfig",
)
#: What a document that carries golden examples needs too: they replace the stash's.
EXAMPLES_PERMISSIONS = ("stash.add_example", "stash.delete_example")


def import_permissions(document: Any) -> tuple[str, ...]:
    """The Django permissions importing ``document`` needs, whichever face imports it::

    missing = [perm for perm in import_permissions(document) if not user.has_perm(perm)]
    """
    carries = isinstance(document, dict) and "examples" in document  # null too: it is refused, not ignored
    return PIPELINE_PERMISSIONS + (EXAMPLES_PERMISSIONS if carries else ())


def missing_import_permissions(user: Any, document: Any) -> list[str]:
    """Those of ``import_permissions(document)`` that ``user`` lacks, in that order; empty: they may import it."""
    return [perm for perm in import_permissions(document) if not user.has_perm(perm)]


class InvalidDocument(StashError):
    """A document that cannot be imported; nothing was changed. ``errors`` maps a path
    (``hooks[2].params``) to its messages, each naming the hook (``hook_errors`` nests them by
    hook index and field, as the API answers)."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{path}: {' '.join(messages)}" for path, messages in errors.items()))

    def nested(self) -> dict[str, Any]:
        """``{"hooks": {"2": {"params": [...]}}, "stash": {"on_error": [...]}, "format": [...]}``; the
        messages of a path that also has fields under it (``hooks`` and ``hooks[0].label``) are its
        ``non_field_errors``, as DRF nests them."""
        tree: dict[str, Any] = {}
        for path, messages in self.errors.items():
            head, dot, rest = path.partition(".")
            name, bracket, index = head.partition("[")
            *parents, last = [name, *([index.rstrip("]")] if bracket else []), *([rest] if dot else [])]
            node = tree
            for key in parents:
                if isinstance(node.get(key), list):
                    node[key] = {"non_field_errors": node[key]}
                node = node.setdefault(key, {})
            if isinstance(node.get(last), dict):
                node[last].setdefault("non_field_errors", []).extend(messages)
            else:
                node.setdefault(last, []).extend(messages)
        return tree


@dataclass
class ImportPlan:
    """What an import does (or, dry, would do) to a stash."""

    stash: Stash
    created: bool
    changes: list[str]
    results: list[ExampleResult] = field(default_factory=list)
    applied: bool = False
    version: PipelineVersion | None = None
    #: The stash's document before and after (as a version records one: ids and secrets in): what
    #: ``changes`` says in words, for a diff (``versions.plan_diff``).
    documents: tuple[dict[str, Any], dict[str, Any]] | None = None

    @property
    def broken(self) -> list[ExampleResult]:
        """The examples it breaks: those a stash that blocks refuses it for."""
        return [result for result in self.results if result.blocks]

    @property
    def failing(self) -> list[ExampleResult]:
        """The examples that do not pass against it: broken, already failing or not run in time."""
        return [result for result in self.results if not result.passed]

    def as_dict(self) -> dict[str, Any]:
        return {
            "stash": self.stash.slug,
            "created": self.created,
            "changes": self.changes,
            "applied": self.applied,
            "version": self.version.number if self.version else None,
            "examples": [result.as_dict() for result in self.results],
        }


def export_document(stash: Stash) -> dict[str, Any]:
    """``stash``'s pipeline and golden examples as a document: no config ids, no secret params."""
    document = public_document(documents.pipeline_document(stash, stash.hooks.in_order()))
    document["examples"] = documents.example_entries(stash.examples.order_by("name"))
    return document


def public_document(document: dict[str, Any]) -> dict[str, Any]:
    """A stored document as anyone may see it: hooks without ids and without secret params."""
    hooks = [
        {
            name: registry.shown_params(hook["hook"], value) if name == "params" else value
            for name, value in hook.items()
            if name != "id"
        }
        for hook in document.get("hooks", [])
    ]
    return {**document, "hooks": hooks}


def import_document(
    target: Stash | str,
    document: Any,
    *,
    dry_run: bool = False,
    note: str = "import",
    on_example: Callable[[int], object] | None = None,
) -> ImportPlan:
    """Make the stash ``target`` (a stash, or a slug: created if missing) what ``document`` says,
    all or nothing; with ``dry_run``, only say what would change. Raises ``InvalidDocument``
    (nothing changed), ``ExamplesBroken`` (nothing changed, the stash blocks such changes) and
    ``PipelineChanged`` (the stash kept changing while the examples ran). ``on_example(count)``
    is told how many of the ``examples_to_run`` have run, as they run."""
    parsed = _check_shape(document)
    slug = target.slug if isinstance(target, Stash) else target
    for _attempt in range(ATTEMPTS):
        # Planned and checked with no lock held: the examples may take seconds, and saves and
        # workers need the stash's row meanwhile.
        with transaction.atomic():
            planned = _plan(slug, parsed)
        plan = planned.plan
        plan.results = compare_examples(plan.stash, planned.configs, planned.checked_examples, planned.live, on_example)
        if dry_run or not (plan.changes or plan.created):
            return plan
        refuse_if_broken(planned.policy_holder, plan.results)
        with one_change(note=note):
            again = _plan(slug, parsed, lock=True)
            if again.key == planned.key:  # else another change came in between: check again
                _apply(again.plan.stash, again.configs, again.removed, again.examples)
                plan.applied = True
        if plan.applied:
            plan.version = again.plan.stash.versions.order_by("-number").first()
            return plan
    raise PipelineChanged([slug])


def examples_to_run(target: Stash | str, document: Any) -> int:
    """How many golden examples importing ``document`` into ``target`` runs: those the document
    carries, if it has an ``examples`` list; else the stash's own (none for a stash yet to be made)."""
    if isinstance(document, dict) and "examples" in document:
        examples = document["examples"]
        return len(examples) if isinstance(examples, list) else 0
    stash = target if isinstance(target, Stash) else Stash.objects.filter(slug=target).first()
    return 0 if stash is None or stash.pk is None else stash.examples.count()


def planned_document(stash: Stash, document: Any) -> dict[str, Any]:
    """``document`` as importing it into ``stash`` would make its version record it, nothing written:
    checked as an import checks it, its hooks matched to the stash's (a matched hook keeps its config
    id and its stored secrets), in run order, without golden examples. ``InvalidDocument`` names
    each fault. A shadow runs such a document (``shadows``), and promoting it imports it."""
    parsed = _check_shape(document)
    with transaction.atomic():
        planned = _plan(stash.slug, parsed)
    return draft_document(planned.plan.stash, planned.configs)


def draft_document(stash: Stash, configs: list[HookConfig]) -> dict[str, Any]:
    """The document of ``stash`` (its settings as they are on the instance) with the hook ``configs``, saved or
    not, in run order: each with its config id if it has one, positions 1..n (the admin's drafts give such)."""
    recorded = documents.pipeline_document(stash, configs, ids=True)
    for position, hook in enumerate(recorded["hooks"], start=1):
        hook["position"] = position
        if hook["id"] is None:
            del hook["id"]
    return recorded


@dataclass
class _Planned:
    plan: ImportPlan
    configs: list[HookConfig]
    removed: list[HookConfig]
    examples: list[Example] | None  # those that replace the stash's, or None
    checked_examples: list[Example]  # those to run
    live: int | None  # the version it starts from (None: a new stash)
    policy_holder: Stash  # whose examples_policy decides: the stash as it is (as the document has it, if new)
    key: tuple[Any, ...]  # what the plan was made from: the same key, the same plan


def _plan(slug: str, parsed: dict[str, Any], lock: bool = False) -> _Planned:
    """What importing ``parsed`` into the stash ``slug`` would do, read now (under its row lock, with
    ``lock``); ``InvalidDocument`` naming each fault."""
    stashes = Stash.objects.select_for_update() if lock else Stash.objects
    found = stashes.filter(slug=slug).first()
    created = found is None
    stash = Stash(slug=slug) if found is None else found
    live_stash = copy.copy(stash)
    before: list[HookConfig] = list(HookConfig.objects.filter(stash=stash).in_order()) if not created else []
    current = documents.pipeline_document(stash, before, ids=True)
    existing = [] if created else list(stash.examples.order_by("name"))
    _set_stash(stash, parsed.get("stash", {}), created)
    configs, removed = _plan_hooks(stash, before, parsed["hooks"])
    examples = _plan_examples(stash, parsed.get("examples"), configs)
    proposed = documents.pipeline_document(stash, configs, ids=True)
    changes = documents.changes(current, proposed)
    if created:  # its settings are new, not changed: say which hooks it starts with
        changes = [_("new stash %(slug)s") % {"slug": slug}] + [c for c in changes if not c.startswith("stash ")]
    if examples is not None and not created and _example_set(examples) != _example_set(existing):
        changes.append(_("examples replaced (%(count)d)") % {"count": len(examples)})
    key = (created, None if created else stash.config_version, [(e.pk, *_example_set([e])) for e in existing])
    return _Planned(
        plan=ImportPlan(stash=stash, created=created, changes=changes, documents=(current, proposed)),
        configs=configs,
        removed=removed,
        examples=examples,
        checked_examples=examples if examples is not None else existing,
        live=None if created else stash.config_version,
        policy_holder=stash if created else live_stash,
        key=key,
    )


# --- checking ----------------------------------------------------------------------------------


def _check_shape(document: Any) -> dict[str, Any]:
    """The document, if its shape and JSON types are right; else ``InvalidDocument`` naming each fault."""
    errors: dict[str, list[str]] = {}
    if not isinstance(document, dict):
        raise InvalidDocument({"document": [_("A pipeline document is a JSON object.")]})
    problem = unstorable(document, "document")  # a NUL in a label would fail the save on PostgreSQL
    if problem:
        raise InvalidDocument({"document": [problem]})
    if document.get("format") != documents.FORMAT:
        errors["format"] = [_("Must be %(format)r.") % {"format": documents.FORMAT}]
    version = document.get("format_version")
    if type(version) is not int or version != documents.FORMAT_VERSION:  # true == 1 in Python, not in JSON
        errors["format_version"] = [
            _("This server reads format version %(version)d.") % {"version": documents.FORMAT_VERSION}
        ]
    for key in sorted(set(document) - {"format", "format_version", "stash", "hooks", "examples"}):
        errors[key] = [_("Unknown field.")]
    if not isinstance(document.get("stash", {}), dict):
        errors["stash"] = [_("Must be a JSON object.")]
    else:
        _check_entry(document.get("stash", {}), "stash", documents.STASH_FIELDS, (), errors)
    if not isinstance(document.get("hooks"), list):
        errors["hooks"] = [_("Must be a list of hooks.")]
    else:
        for index, hook in enumerate(document["hooks"]):
            _check_entry(hook, f"hooks[{index}]", ("id", *documents.HOOK_FIELDS), ("hook",), errors)
        positions = [
            hook.get("position")
            for hook in document["hooks"]
            if isinstance(hook, dict) and isinstance(hook.get("position"), int)
        ]
        if len(positions) != len(set(positions)):
            errors.setdefault("hooks", []).append(_("Two hooks have the same position."))
        _check_count(limits.check_hooks, len(document["hooks"]), "hooks", errors)
    examples = document.get("examples")
    if "examples" in document and not isinstance(examples, list):  # null too: leave the key out to keep them
        errors["examples"] = [_("Must be a list of examples.")]
    elif examples is not None:
        for index, example in enumerate(examples):
            _check_entry(
                example, f"examples[{index}]", documents.EXAMPLE_FIELDS, ("name", "payload", "verdict"), errors
            )
        _check_count(limits.check_examples, len(examples), "examples", errors)
    if errors:
        raise InvalidDocument(errors)
    return document


def _check_count(check: Any, count: int, path: str, errors: dict[str, list[str]]) -> None:
    """Add to ``errors`` at ``path`` why ``check`` (one of ``limits``) refuses ``count``."""
    try:
        check(count)
    except ValidationError as exc:
        errors.setdefault(path, []).extend(exc.messages)


def _check_entry(
    entry: Any, path: str, known: tuple[str, ...], required: tuple[str, ...], errors: dict[str, list[str]]
) -> None:
    if not isinstance(entry, dict):
        errors[path] = [_("Must be a JSON object.")]
        return
    name = f"{path} ({documents.title(entry)})" if path.startswith("hooks") else path
    for key in sorted(set(entry) - set(known)):
        errors[f"{path}.{key}"] = [_("%(where)s: unknown field.") % {"where": name}]
    for key in required:
        if key not in entry:
            errors[f"{path}.{key}"] = [_("%(where)s: this field is required.") % {"where": name}]
    for key in set(entry) & set(known):
        types = _TYPES.get(key, (str,))
        value = entry[key]
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            errors[f"{path}.{key}"] = [
                _("%(where)s: must be %(type)s.") % {"where": name, "type": _TYPE_NAMES[types[0]]}
            ]


def _set_stash(stash: Stash, settings: dict[str, Any], created: bool) -> None:
    for name, value in settings.items():
        if name != "slug":
            setattr(stash, name, value)
    try:
        stash.full_clean(exclude=[] if created else ["slug"], validate_unique=created)
    except ValidationError as exc:
        raise InvalidDocument(
            {f"stash.{name}": list(messages) for name, messages in exc.message_dict.items()}
        ) from None


def _plan_hooks(
    stash: Stash, before: list[HookConfig], hooks: list[dict[str, Any]]
) -> tuple[list[HookConfig], list[HookConfig]]:
    """The stash's hook configs as the document wants them, in run order (matched ones edited in
    memory, new ones unsaved), and those it removes; ``InvalidDocument`` naming each bad field."""
    order = sorted(range(len(hooks)), key=lambda index: (hooks[index].get("position", index + 1), index))
    wanted = [hooks[index] for index in order]
    pairs, removed, _added = documents.pair_hooks(documents.pipeline_document(stash, before, ids=True)["hooks"], wanted)
    matched = dict((new, before[old]) for old, new in pairs)
    defaults = HookConfig()
    configs, errors = [], {}
    for place, (index, entry) in enumerate(zip(order, wanted, strict=True), start=1):
        config = matched.get(place - 1)
        # Before the entry's fields replace the stored ones: the stored secrets it leaves out.
        params = merge_secrets(config, entry.get("hook", defaults.hook), entry.get("params", defaults.params))
        if config is None:
            config = HookConfig(stash=stash)
        for name in documents.HOOK_FIELDS:
            if name != "position":
                setattr(config, name, entry.get(name, getattr(defaults, name)))
        config.params = params
        if config._state.adding:
            config.position = place
        try:
            config.full_clean(exclude=["stash", "position"], validate_unique=False, validate_constraints=False)
        except ValidationError as exc:
            where = f"{documents.title(entry)} ({entry.get('hook')})"
            for name, messages in exc.message_dict.items():
                errors[f"hooks[{index}].{name}"] = [f"{where}: {message}" for message in messages]
        configs.append(config)
    if errors:
        raise InvalidDocument(errors)
    return configs, [before[index] for index in removed]


def _plan_examples(
    stash: Stash, entries: list[dict[str, Any]] | None, configs: list[HookConfig]
) -> list[Example] | None:
    """The document's examples (unsaved), each checked against the hooks it gives the stash."""
    if entries is None:
        return None
    examples, errors, names = [], {}, set()
    for index, entry in enumerate(entries):
        example = Example(
            stash=stash, **{name: documents.example_field(entry, name) for name in documents.EXAMPLE_FIELDS}
        )
        example.checked_against = configs
        try:
            example.full_clean(
                exclude=["stash", "content", "created_by"], validate_unique=False, validate_constraints=False
            )
        except ValidationError as exc:
            for name, messages in exc.message_dict.items():
                errors[f"examples[{index}].{name}"] = [f"{example.name}: {message}" for message in messages]
        if example.name in names:
            errors[f"examples[{index}].name"] = [_("%(name)s: two examples have this name.") % {"name": example.name}]
        names.add(example.name)
        examples.append(example)
    if errors:
        raise InvalidDocument(errors)
    return examples


def _example_set(examples: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (e.name, documents.dumps(e.payload), e.verdict, e.reason_code, e.hook, documents.dumps(e.service_answers))
        for e in examples
    )


# --- applying ------------------------------------------------------------------------------------


def _apply(stash: Stash, configs: list[HookConfig], removed: list[HookConfig], examples: list[Example] | None) -> None:
    """Write the plan (inside the caller's change, under the stash's lock)."""
    stash.save()
    if removed:
        HookConfig.objects.filter(pk__in=[config.pk for config in removed]).delete()
    last = max((config.position for config in configs if not config._state.adding), default=0)
    for extra, config in enumerate(config for config in configs if config._state.adding):
        config.stash = stash
        config.position = last + 1 + extra  # after the kept ones until the reorder below
    with transaction.atomic():
        for config in configs:
            config.save()
    ids = [config.pk for config in configs]
    if ids != list(stash.hooks.in_order().values_list("pk", flat=True)):
        HookConfig.objects.reorder(stash, ids)
    if examples is not None:
        stash.examples.all().delete()
        for example in examples:
            example.stash = stash
        Example.objects.bulk_create(examples)
