"""How big a stash may grow: hooks per stash, golden examples per stash, the bytes of a pipeline document.

Every face that adds hooks or examples (the admin's pages and actions, the API, imports and
restores of documents) asks here first, and turns ``ValidationError`` into its own refusal (a
form error, a 400, a ``CommandError``)::

    limits.check_hooks(stash.hooks.count() + 1)       # ValidationError past STASH_MAX_HOOKS
    limits.check_new_examples(stash.pk)               # one more example, past STASH_MAX_EXAMPLES?
    limits.check_document_bytes(len(body))            # past STASH_MAX_DOCUMENT_BYTES

The limits keep what reads a whole stash at once (its admin page, a worker building its
pipeline, a run of its examples before each change) within a request's time.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from stash.models import Example, HookConfig


def check_hooks(count: int) -> None:
    """``ValidationError`` if a stash with ``count`` hooks would have more than ``STASH_MAX_HOOKS``."""
    if count > settings.STASH_MAX_HOOKS:
        raise ValidationError(
            _("A stash has at most %(max)s hooks (STASH_MAX_HOOKS); this would make %(count)s.")
            % {"max": f"{settings.STASH_MAX_HOOKS:,}", "count": f"{count:,}"},
            code="too_many_hooks",
        )


def check_new_hooks(stash_id: int, adding: int = 1) -> None:
    """``check_hooks`` for the stash ``stash_id`` with ``adding`` more hooks than it has."""
    if adding > 0:
        check_hooks(HookConfig.objects.filter(stash_id=stash_id).count() + adding)


def check_examples(count: int) -> None:
    """``ValidationError`` if a stash with ``count`` golden examples would have more than ``STASH_MAX_EXAMPLES``."""
    if count > settings.STASH_MAX_EXAMPLES:
        raise ValidationError(
            _("A stash has at most %(max)s golden examples (STASH_MAX_EXAMPLES); this would make %(count)s.")
            % {"max": f"{settings.STASH_MAX_EXAMPLES:,}", "count": f"{count:,}"},
            code="too_many_examples",
        )


def check_new_examples(stash_id: int, adding: int = 1) -> None:
    """``check_examples`` for the stash ``stash_id`` with ``adding`` more examples than it has."""
    if adding > 0:
        check_examples(Example.objects.filter(stash_id=stash_id).count() + adding)


def check_document_bytes(size: int) -> None:
    """``ValidationError`` if a pipeline document of ``size`` bytes is past ``STASH_MAX_DOCUMENT_BYTES``."""
    if size > settings.STASH_MAX_DOCUMENT_BYTES:
        raise ValidationError(
            _("A pipeline document has at most %(max)s bytes (STASH_MAX_DOCUMENT_BYTES); this one has %(size)s.")
            % {"max": f"{settings.STASH_MAX_DOCUMENT_BYTES:,}", "size": f"{size:,}"},
            code="document_too_large",
        )
