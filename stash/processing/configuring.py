"""Changing a stash's hook configs as the admin does: save, enable, disable, duplicate, delete; and
``merge_secrets``, the params to store when someone sends back what they were shown.

Each change takes its stashes' row locks first (``Stash.lock``), then writes, and leaves the
positions 1..n (see ``ordering``); it is one ``versioning.one_change``: the model's writes move
each stash's ``config_version`` once, so workers rebuild the pipeline once, on their next batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from stash.core import registry
from stash.db.versioning import one_change
from stash.models import HookConfig, Stash
from stash.processing import limits
from stash.processing.ordering import arrange_hooks, place_hooks


def merge_secrets(config: HookConfig | None, hook: str, params: Any) -> Any:
    """The params to store for ``config`` (as saved; None or unsaved: a new one), sent as ``hook`` with
    ``params`` by someone who was never shown its secrets (every face shows ``registry.shown_params``).

    The stored secrets ``params`` leaves out are kept; a secret given anew replaces the stored one.
    A config switched to another hook keeps none: the old hook's secret is not the new one's. Params
    that come out equal to the stored ones are the stored ones, as they are (their key order too)::

        form.cleaned_data["params"] = merge_secrets(form.instance, form.cleaned_data["hook"], params)
    """
    if config is None or config._state.adding or hook != config.hook:
        return params
    merged = registry.keep_secrets(hook, params, config.params)
    return config.params if merged == config.params else merged


def save_hook(config: HookConfig) -> None:
    """Save ``config`` as edited, under its stash's row lock, as one change (one version). A new one
    (position 0) is appended: the model numbers it last under that lock; ``ValidationError`` if its
    stash has all the hooks it may have (``limits``). Every face saves a hook config through here."""
    with one_change():
        Stash.lock([config.stash_id])
        if config._state.adding:
            limits.check_new_hooks(config.stash_id)
        config.save()


@contextmanager
def saving_hooks(stash: Stash, positions: Mapping[int, int] | None = None) -> Iterator[None]:
    """Hold ``stash``'s row lock while the block saves and deletes its hook configs (the rows of its
    page), then put them at ``positions`` ({config id: position}, as dragged) and close the gaps
    that deletes left. With ``positions`` None the order is left as the block leaves it."""
    with one_change():
        Stash.lock([stash.pk])
        yield
        if positions is not None:
            place_hooks(stash, positions)


def set_enabled(configs: QuerySet[HookConfig], enabled: bool) -> int:
    """Enable (or disable) the hook configs of the queryset ``configs``; returns how many changed."""
    with transaction.atomic():
        Stash.lock(configs.values_list("stash_id", flat=True))
        return configs.exclude(enabled=enabled).update(enabled=enabled)


def duplicate_hooks(configs: QuerySet[HookConfig]) -> tuple[int, int]:
    """Copy each hook config of the queryset ``configs``, disabled and labelled "(copy)", to the place
    right after its original, all in one change, under their stashes' row locks (taken in stash order).

    Configs whose hook is not registered are not copied (a copy must validate). Returns the
    numbers copied and skipped; ``ValidationError`` (nothing copied) if a stash would have more
    hooks than it may (``limits``).
    """
    copied = skipped = 0
    originals = list(configs.select_related("stash").order_by("stash", "position"))
    copies = Counter(config.stash_id for config in originals if not config.is_missing)
    with one_change():
        Stash.lock(list(copies))
        for stash_id, count in sorted(copies.items()):
            limits.check_new_hooks(stash_id, adding=count)
        for config in originals:
            if config.is_missing:
                skipped += 1
                continue
            with transaction.atomic():
                Stash.lock([config.stash_id])
                label = _("%(label)s (copy)") % {"label": config.title}
                copy = HookConfig.objects.create(
                    stash=config.stash,
                    hook=config.hook,
                    label=label,
                    params=config.params,
                    enabled=False,
                    mode=config.mode,
                    on_error=config.on_error,
                    condition=config.condition,
                    timeout_ms=config.timeout_ms,
                    cache_seconds=config.cache_seconds,
                    min_precision=config.min_precision,
                    min_precision_count=config.min_precision_count,
                )
                arrange_hooks(config.stash, partial(_after, original=config.pk, copy=copy.pk))
            copied += 1
    return copied, skipped


def _after(current: list[tuple[int, int]], original: int, copy: int) -> list[int]:
    """The ids of ``current`` ([(id, position)] in order) with ``copy`` moved right after ``original``
    (last, if the original has gone)."""
    order = [pk for pk, _position in current if pk != copy]
    place = order.index(original) + 1 if original in order else len(order)
    return order[:place] + [copy] + order[place:]


def delete_hooks(configs: QuerySet[HookConfig]) -> int:
    """Delete the hook configs of the queryset ``configs`` and close the gaps they leave, in one
    transaction under their stashes' row locks. Returns how many were deleted."""
    with one_change():
        stashes = list(Stash.objects.filter(pk__in=configs.values("stash_id")).order_by("pk"))
        Stash.lock([stash.pk for stash in stashes])
        _total, deleted = configs.delete()
        for stash in stashes:
            place_hooks(stash, {})
    return deleted.get(HookConfig._meta.label, 0)
