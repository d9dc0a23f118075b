"""Template filters for ``stash.admin.formatting``: ``{% load stash_format %}`` then
``{{ entry.duration_ms|duration }}``, ``{{ rate|percent }}``, ``{{ entry.outcome|badge }}``,
``{{ entry.payload|pretty_json }}``."""

from django import template

from stash.admin import formatting

register = template.Library()

register.filter("duration", formatting.duration)
register.filter("age", formatting.age)
register.filter("percent", formatting.percent)
register.filter("badge", formatting.badge, is_safe=True)
register.filter("pretty_json", formatting.pretty_json)
