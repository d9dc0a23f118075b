"""``{% appeals_waiting %}``: the admin index's line of appeals awaiting a decision, linking to the appeals page."""

from django import template
from django.contrib import admin
from django.urls import reverse

from stash import processing
from stash.models import Content

register = template.Library()


@register.inclusion_tag("admin/stash/appeals_waiting.html", takes_context=True)
def appeals_waiting(context):
    """How many appeals are open, in one query; nothing for someone who may not see items."""
    request = context["request"]
    if not admin.site.get_model_admin(Content).has_view_permission(request):
        return {"shown": False}
    return {"shown": True, "count": processing.open_appeal_count(), "url": reverse("admin:stash_content_appeals")}
