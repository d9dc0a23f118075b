"""Ordering a stash's hooks: atomically, under the stash's row lock, positions always 1..n."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.db import transaction
from django.utils.translation import gettext as _

from ..exceptions import StaleConfig
from ..models import HookConfig, Stash


def reorder_hooks(stash: Stash, ordered_ids: Sequence[int], config_version: int) -> None:
    """Put ``stash``'s hooks in the order of ``ordered_ids`` if nothing changed since ``config_version``.

    Raises ``StaleConfig`` when the stash's hooks changed meanwhile, and ``ValidationError`` when
    ``ordered_ids`` does not list every hook of the stash once; then nothing changes.
    """
    with transaction.atomic():
        current = Stash.objects.select_for_update().filter(pk=stash.pk).values_list("config_version", flat=True).get()
        if current != config_version:
            raise StaleConfig(_("The hooks of %(slug)s changed since version %(based)d (now %(current)d): "
                                "reload them and try again.")
                              % {"slug": stash.slug, "based": config_version, "current": current})
        HookConfig.objects.reorder(stash, ordered_ids)
    stash.refresh_from_db(fields=["config_version"])


def place_hooks(stash: Stash, positions: Mapping[int, int]) -> bool:
    """Move hooks of ``stash`` to the 1-based places in ``positions`` ({config id: position}).

    The other hooks keep their relative order; where a moved hook and another want the same
    place, the moved one goes first, so a place below 1 puts hooks at the top and one past the
    end at the bottom. Ids of other stashes are ignored. Runs under the stash's row lock and
    through ``HookConfig.objects.reorder``: positions end up 1..n and ``config_version`` moves,
    so workers rebuild the pipeline on their next batch. Returns whether anything changed.
    """
    wanted = {int(pk): int(position) for pk, position in positions.items()}
    with transaction.atomic():
        Stash.objects.select_for_update().filter(pk=stash.pk).get()
        current = list(HookConfig.objects.filter(stash_id=stash.pk).in_order().values_list("pk", "position"))
        keyed = sorted((wanted.get(pk, position), pk not in wanted, index, pk)
                       for index, (pk, position) in enumerate(current))
        order = [key[-1] for key in keyed]
        if order == [pk for pk, _position in current] and \
                [position for _pk, position in current] == list(range(1, len(current) + 1)):
            return False
        HookConfig.objects.reorder(stash, order)
    return True
