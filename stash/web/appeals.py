"""``POST /c/<id>/appeal/``: a submitter appeals the rejection of their item from its page."""

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from stash import processing
from stash.web import views
from stash.web.appeal_forms import AppealForm, submitted_ids


@require_POST
def appeal(request, pk):
    """Send the appeal; a bad or late one shows the item's page again with the reason (400)."""
    item = views.visible_content(request, pk)
    if item is None:
        return redirect_to_login(reverse("stash:content", args=[pk]))
    if not processing.may_appeal(request.user, item, submitted_ids(request)):
        raise PermissionDenied(_("Only the person who submitted this item can appeal its decision."))
    form = AppealForm(request.POST)
    if form.is_valid():
        try:
            processing.appeal(item, form.cleaned_data["statement"], request.user)
        except processing.AppealRefused as exc:
            form.add_error("statement" if exc.field else None, str(exc))
        except processing.AppealConflict as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, _("Your appeal was sent. A reviewer will look at it."))
            return redirect("stash:content", pk=item.pk)
    return views.content_page(request, item, appeal_form=form, status=400)
