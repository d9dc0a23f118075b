"""The demo stash: what `make run` and `stash_demo` set up."""
from django.db import transaction

from .models import HookConfig, Stash

DEMO_HOOKS = [
    ("require_fields", "Needs text", {"fields": ["text"]}),
    ("keyword_blocklist", "No spam", {"words": ["spam", "scam", "free money"], "whole_word": True}),
    ("max_size", "At most 64 KB", {"max_bytes": 65536}),
]


@transaction.atomic
def create_demo():
    """Create or reset the stash "audit" with the demo hooks, in order; return it."""
    stash, _ = Stash.objects.update_or_create(
        slug="audit", defaults={"name": "Audit", "description": "Demo stash: text required, no spam, 64 KB at most."}
    )
    stash.hooks.all().delete()
    for hook, label, params in DEMO_HOOKS:
        HookConfig.objects.create(stash=stash, hook=hook, label=label, params=params)
    return stash
