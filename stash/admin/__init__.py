"""The admin face: one module per model admin (stashes, hooks, contents, examples) and what they share
(base); their forms, the examples guard, drafts, the params widget; display helpers (formatting, charts,
previews); and ``views/`` (tools, review, pipelines, versions).

Django's admin autodiscovery imports this package; importing the modules below registers their admins."""

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from stash.admin import contents, examples, hooks, stashes  # noqa: F401 - registers the model admins

# The site is stash: its header, its pages' <title> and the index's heading say so, not "Django administration".
admin.site.site_header = _("stash")
admin.site.site_title = _("stash admin")
admin.site.index_title = _("stash administration")
