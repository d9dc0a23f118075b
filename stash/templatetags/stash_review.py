"""``{% awaiting_review %}``: the admin index's panel of held (and overdue) items per stash, each linking to its
review page."""

from django import template
from django.contrib import admin
from django.urls import reverse

from stash import processing
from stash.models import Content

register = template.Library()


@register.inclusion_tag("admin/stash/awaiting_review.html", takes_context=True)
def awaiting_review(context):
    """Held and overdue items per stash, in three queries; nothing for someone who may not see items."""
    request = context["request"]
    if not admin.site.get_model_admin(Content).has_view_permission(request):
        return {"shown": False}
    overdue = processing.overdue_counts()
    return {
        "shown": True,
        "stashes": [
            (stash, held, overdue.get(stash.pk, 0), reverse("admin:stash_stash_review", args=[stash.pk]))
            for stash, held in processing.held_counts()
        ],
    }
