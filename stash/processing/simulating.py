"""Simulating: a stash's hooks, or a draft of them, over a payload or an existing item; nothing is saved.

    simulate(stash, {"text": "hi"})                              # its current hooks
    simulate(stash, content=simulation_item(stash, pk, visible), verbose=True)  # as submitted
    simulate(stash, payload, hooks=drafted_hooks(kept, added))   # hooks as edited, not saved

``verbose`` runs every hook, past the one that decides, and records each transform's payload
(``pipeline.Pipeline.run``). The hooks run in a child process (``child_process``): no hook's write,
and no hang, reaches the caller.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from stash.core import pipeline
from stash.models import Content, HookConfig, Stash, validate_payload
from stash.processing.building import build_step, document_pipeline, item_for, pipeline_for, submitted_payload
from stash.processing.child_process import call_with_deadline
from stash.processing.importing import planned_document
from stash.processing.ordering import placed

#: The field that names an existing item to simulate on, in the API and the admin.
CONTENT_FIELD = "content_id"


def simulate(
    stash: Stash,
    payload: Any = None,
    *,
    content: Content | None = None,
    hooks: Iterable[HookConfig] | None = None,
    verbose: bool = False,
) -> pipeline.Result:
    """Run ``stash``'s current hooks (or ``hooks``, configs in run order, saved or not: the
    enabled ones run) over ``payload``, or over the payload the item ``content`` was submitted
    with (before any transform: ``submitted_payload``); nothing is saved or counted, and no sink is called.

    The hooks run in a child process given ``STASH_SIMULATE_TIMEOUT`` seconds (see ``child_process``).
    Raises ``ValidationError`` (on ``payload``) for a payload that is not a JSON object or is too
    large, and ``DeadlineExceeded`` (naming the hook that was running) when the hooks take longer.
    """
    if content is not None:
        # As the workers saw it when it came: hooks that read the item's metadata or history judge it
        # alike, and a transform that already ran does not run on its own output.
        item = replace(item_for(content), payload=submitted_payload(content))
    else:
        validate_payload(payload, stash)
        item = pipeline.Item(payload=payload, stash=stash.slug, source="simulate")
    item_pipeline = looking_pipeline(stash, hooks=hooks)

    def run(progress: Callable[[str], None]) -> pipeline.Result:
        return item_pipeline.looking().run(item, on_step=lambda step: progress(f"hook {step.title!r}"), verbose=verbose)

    return call_with_deadline(run, settings.STASH_SIMULATE_TIMEOUT)


def looking_pipeline(
    stash: Stash, *, hooks: Iterable[HookConfig] | None = None, document: Mapping[str, Any] | None = None
) -> pipeline.Pipeline:
    """The pipeline a simulation or a replay runs (call its ``looking()``): ``stash``'s current one; or
    that of ``hooks`` (configs in run order, saved or not: the enabled ones run, with ``stash``'s
    settings); or that of ``document`` (a pipeline document, as a file or an export has it: checked
    as an import checks it, its hooks matched to the stash's as an import matches them).

    Raises ``InvalidDocument`` naming each fault of ``document``; nothing is written either way.
    """
    if document is not None:
        return document_pipeline(stash, planned_document(stash, document))
    if hooks is not None:
        return pipeline.Pipeline([build_step(config, stash) for config in hooks if config.enabled])
    return pipeline_for(stash)


def simulation_item(stash: Stash, content_id: uuid.UUID | str, visible: QuerySet[Content]) -> Content:
    """The item ``content_id`` of ``stash``, if it is among ``visible`` (the items the caller may
    read, e.g. ``visible_contents(user)``).

    Raises ``ValidationError`` on ``content_id`` for an id that is not one, an item that does
    not exist or may not be read (alike: the answer does not tell them apart), and an item of
    another stash.
    """
    try:
        pk = content_id if isinstance(content_id, uuid.UUID) else uuid.UUID(str(content_id))
    except ValueError:
        raise ValidationError({CONTENT_FIELD: _("“%(id)s” is not an item id.") % {"id": content_id}}) from None
    content = visible.select_related("stash").filter(pk=pk).first()
    if content is None:
        raise ValidationError({CONTENT_FIELD: _("There is no item %(id)s.") % {"id": pk}})
    if content.stash_id != stash.pk:
        raise ValidationError(
            {
                CONTENT_FIELD: _("Item %(id)s belongs to the stash %(other)s, not to %(stash)s.")
                % {"id": pk, "other": content.stash.slug, "stash": stash.slug}
            }
        )
    return content


def drafted_hooks(kept: Sequence[tuple[HookConfig, int | None]], added: Sequence[HookConfig]) -> list[HookConfig]:
    """A stash's hook configs as edited on its page and not saved, in the order a save would
    give them, numbered 1..n (on these instances, which are not saved).

    ``kept``: the configs already saved that stay, each with the position it was dragged to (or
    None); they are placed as ``ordering.place_hooks`` places them. ``added``: new configs, in
    the order of the page, which a save appends after them.
    """
    last = max((config.position for config, _wanted in kept), default=0)
    current = [(index, config.position) for index, (config, _wanted) in enumerate(kept)]
    current += [(len(kept) + index, last + 1 + index) for index in range(len(added))]
    wanted = {index: position for index, (_config, position) in enumerate(kept) if position is not None}
    configs = [config for config, _wanted in kept] + list(added)
    # The saved order is the order of the stored positions: sort them as they run.
    current.sort(key=lambda row: (row[1], row[0]))
    ordered = [configs[index] for index in placed(current, wanted)]
    for position, config in enumerate(ordered, start=1):
        config.position = position
    return ordered
