"""``{% awaiting_review %}``: the admin index's panel of held (and overdue) items per stash, how long the
oldest has waited, each linking to its review page, and a link to the queue of every stash."""

from django import template
from django.contrib import admin
from django.urls import reverse
from django.utils.translation import gettext as _

from stash import processing
from stash.admin import formatting
from stash.models import Content

register = template.Library()


def waited(seconds):
    """How long the oldest held item has waited, to the minute at best: ``under 1 min``, ``3 h 5 min``."""
    if seconds is not None and seconds < 60:
        return _("under 1 min")
    return formatting.age(seconds if seconds is None else round(seconds / 60) * 60)


@register.inclusion_tag("admin/stash/awaiting_review.html", takes_context=True)
def awaiting_review(context):
    """Held and overdue items per stash and the oldest's wait, in four queries; nothing for someone who
    may not see items."""
    request = context["request"]
    if not admin.site.get_model_admin(Content).has_view_permission(request):
        return {"shown": False}
    overdue = processing.overdue_counts()
    oldest = processing.oldest_held()
    return {
        "shown": True,
        "stashes": [
            (
                stash,
                held,
                overdue.get(stash.pk, 0),
                reverse("admin:stash_stash_review", args=[stash.pk]),
                waited(oldest.get(stash.pk)),
            )
            for stash, held in processing.held_counts()
        ],
        "review_all_url": reverse("admin:stash_content_review_all"),
    }
