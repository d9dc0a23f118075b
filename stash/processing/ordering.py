"""Ordering a stash's hooks: atomically, under the stash's row lock, positions always 1..n."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from django.db import transaction
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from stash.core.exceptions import StaleConfig
from stash.models import HookConfig, Stash


def reorder_hooks(stash: Stash, ordered_ids: Sequence[int], config_version: int) -> None:
    """Put ``stash``'s hooks in the order of ``ordered_ids`` if nothing changed since ``config_version``.

    Raises ``StaleConfig`` when the stash's hooks changed meanwhile, and ``ValidationError`` when
    ``ordered_ids`` does not list every hook of the stash once; then nothing changes.
    """
    with transaction.atomic():
        current = Stash.lock_one(stash.pk)
        if current != config_version:
            raise StaleConfig(
                _("The hooks of %(slug)s changed since version %(based)d (now %(current)d): reload them and try again.")
                % {"slug": stash.slug, "based": config_version, "current": current}
            )
        HookConfig.objects.reorder(stash, ordered_ids)
    stash.refresh_from_db(fields=["config_version"])


def arrange_hooks(stash: Stash, arrange: Callable[[list[tuple[int, int]]], list[int]]) -> bool:
    """Renumber ``stash``'s hooks 1..n in the order ``arrange`` gives, under the stash's row lock.

    ``arrange`` gets the hooks as they are, ``[(config id, position)]`` in run order, read under
    the lock, and returns every one of their ids in the new order. The reorder goes through
    ``HookConfig.objects.reorder``, so ``config_version`` moves and workers rebuild the pipeline
    on their next batch. Returns whether anything changed (no write when nothing would).
    """
    with transaction.atomic():
        Stash.lock_one(stash.pk)
        current = list(HookConfig.objects.filter(stash_id=stash.pk).in_order().values_list("pk", "position"))
        order = arrange(current)
        if order == [pk for pk, _position in current] and [position for _pk, position in current] == list(
            range(1, len(current) + 1)
        ):
            return False
        HookConfig.objects.reorder(stash, order)
    return True


def place_hooks(stash: Stash, positions: Mapping[int, int]) -> bool:
    """Move hooks of ``stash`` to the 1-based places in ``positions`` ({config id: position}).

    The other hooks keep their relative order; where a moved hook and another want the same
    place, the moved one goes first, so a place below 1 puts hooks at the top and one past the
    end at the bottom. Ids of other stashes are ignored; ``{}`` closes gaps. See ``arrange_hooks``.
    """
    wanted = {int(pk): int(position) for pk, position in positions.items()}
    return arrange_hooks(stash, lambda current: placed(current, wanted))


def placed(current: Sequence[tuple[int, int]], wanted: Mapping[int, int]) -> list[int]:
    """The ids of ``current`` ([(id, position)] in run order) in the order ``place_hooks`` gives
    them: those in ``wanted`` ({id: position}) at their wanted places, first where they tie."""
    keyed = sorted(
        (wanted.get(pk, position), pk not in wanted, index, pk) for index, (pk, position) in enumerate(current)
    )
    return [key[-1] for key in keyed]


def place_dragged_hooks(moved: Sequence[Sequence[int | str]]) -> int:
    """Apply a drag and drop in the hooks list: ``moved`` is ``[[config id, position], ...]`` as
    django-admin-sortable2's script posts it (the moved range, renumbered), all of one stash.

    Raises ``ValueError`` (nothing changes) for hooks of several stashes, or of none, and for
    ids or positions that are not integers. Returns how many hooks were posted.
    """
    positions = {int(pk): int(position) for pk, position in moved}
    stashes = list(Stash.objects.filter(hooks__pk__in=list(positions)).distinct())
    if len(stashes) != 1:
        raise ValueError(_("Reorder the hooks of one stash at a time."))
    place_hooks(stashes[0], positions)
    return len(positions)


def move_hooks(configs: QuerySet[HookConfig], top: bool) -> int:
    """Move the hook configs of the queryset ``configs`` to the top (or the bottom) of their stashes,
    keeping their order among themselves; each stash in one reorder. Returns how many moved."""
    by_stash: dict[int, set[int]] = {}
    for stash_id, pk in configs.order_by().values_list("stash_id", "pk"):
        by_stash.setdefault(stash_id, set()).add(pk)
    for stash in Stash.objects.filter(pk__in=list(by_stash)).order_by("pk"):
        selected = by_stash[stash.pk]

        def arrange(current: list[tuple[int, int]], selected: set[int] = selected) -> list[int]:
            moved = [pk for pk, _position in current if pk in selected]
            others = [pk for pk, _position in current if pk not in selected]
            return moved + others if top else others + moved

        arrange_hooks(stash, arrange)
    return sum(len(ids) for ids in by_stash.values())
