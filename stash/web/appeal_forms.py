"""The appeal form on an item's page, and what the page shows of an appeal: its form, or its outcome."""

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from stash import processing
from stash.models import APPEAL_TEXT_MAX


class AppealForm(forms.Form):
    """The submitter's own words on why the decision is wrong."""

    statement = forms.CharField(
        label=_("Why the decision is wrong"),
        max_length=APPEAL_TEXT_MAX,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text=_("In your own words, up to %(n)s characters.") % {"n": f"{APPEAL_TEXT_MAX:,}"},
        error_messages={"required": _("Say why you think the decision is wrong.")},
    )


def submitted_ids(request):
    """The ids of the items this browser submitted (what lets an anonymous submitter follow them)."""
    return request.session.get(processing.SUBMITTED_SESSION_KEY, [])


def appeal_context(request, item, form=None):
    """What the item's page shows of appeals: the appeal made, if any; else, for whoever may appeal,
    the form while the item may be appealed, or when the time to appeal ended."""
    appeal = processing.appeal_of(item)
    context = {"appeal": appeal, "appeal_form": None, "appeal_until": None, "appeal_closed": False}
    if appeal is not None or not processing.may_appeal(request.user, item, submitted_ids(request)):
        return context
    until = processing.appeal_deadline(item)
    if until is None:
        return context
    context["appeal_until"] = until
    if timezone.now() > until and form is None:
        context["appeal_closed"] = True
    else:
        context["appeal_form"] = form or AppealForm()
    return context
