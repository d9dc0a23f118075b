"""The choices more than one model names: what a hook's error does, what a broken golden example does."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from stash.core import pipeline


class OnError(models.TextChoices):
    REJECT = pipeline.ON_ERROR_REJECT, _("reject the item")
    SKIP = pipeline.ON_ERROR_SKIP, _("skip the hook")
    HOLD = pipeline.ON_ERROR_HOLD, _("hold for review")


#: A hook's ``on_error``: its stash's (inherit), or one of ``OnError``'s.
HookOnError = models.TextChoices(  # type: ignore[call-overload]  # django-stubs: no functional API with labels
    "HookOnError",
    [
        ("INHERIT", ("inherit", _("as the stash says"))),
        *((choice.name, (choice.value, choice.label)) for choice in OnError),
    ],
)


class ExamplesPolicy(models.TextChoices):
    BLOCK = "block", _("refuse the change")
    WARN = "warn", _("make the change, with a warning")


class ExpireAction(models.TextChoices):
    """What a held item past its stash's ``review_expire_hours`` becomes."""

    APPROVE = "approve", _("approve (accept)")
    REJECT = "reject", _("reject")
