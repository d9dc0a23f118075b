"""The admin face: one module per model admin (stashes, hooks, contents, examples) and what they share
(base); their forms, the examples guard, drafts, the params widget; display helpers (formatting, charts,
previews); and ``views/`` (tools, review, pipelines, versions).

Django's admin autodiscovery imports this package; importing the modules below registers their admins."""

from stash.admin import contents, examples, hooks, stashes  # noqa: F401 - registers the model admins
