"""The demo stash: what `make run` and `stash_demo` set up."""

from stash.models import HookConfig, Stash
from stash.processing import one_change

SLUG = "audit"
DEMO_STASH = {"name": "Audit", "description": "Demo stash: text required, no spam, 64 KB at most."}
DEMO_HOOKS = [
    ("require_fields", "Needs text", {"fields": ["text"]}),
    ("keyword_blocklist", "No spam", {"words": ["spam", "scam", "free money"], "whole_word": True}),
    ("max_size", "At most 64 KB", {"max_bytes": 65536}),
]


def create_demo(reset=False):
    """The stash "audit" with the demo hooks, in order, created if it is missing; return it.

    An existing demo stash is left exactly as it is (its hooks, their counters, its items), unless
    ``reset``: then its fields and hooks are the demo's again (new hooks, counters at 0; its items
    stay, no longer naming the hooks that decided them). Either is one change of the stash's config.
    """
    with one_change():
        stash, created = Stash.objects.select_for_update().get_or_create(slug=SLUG, defaults=DEMO_STASH)
        if not created and not reset:
            return stash
        if not created:  # reset
            for name, value in DEMO_STASH.items():
                setattr(stash, name, value)
            stash.save()
            stash.hooks.all().delete()
        for hook, label, params in DEMO_HOOKS:
            HookConfig.objects.create(stash=stash, hook=hook, label=label, params=params)
    stash.refresh_from_db()
    return stash
