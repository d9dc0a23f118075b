"""Stashes and items with statements of reasons, for the tests of several faces."""

from stash import hooks, processing
from stash.models import Content

POLICY = {
    "default": {"reference": "Terms §4", "url": "https://example.com/terms#4"},
    "codes": {
        "blocked_word": {
            "text": "Your {restriction} post used a word we do not allow in {field}.",
            "category": "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH",
        },
        "link": {
            "text": "Links wait for a person: {reason}.",
            "ground": "illegal",
            "reference": "Fraud Act s.2",
            "category": "STATEMENT_CATEGORY_SCAMS_AND_FRAUD",
        },
    },
}


class HoldLinks(hooks.Filter):
    """Hold content with a link for a person to look at."""

    def filter(self, item):
        text = item.payload.get("text", "")
        return self.hold("has a link", "link", "text") if "http" in text else self.keep()


def moderated_stash(make_stash, register_temporarily, slug="moderated", **fields):
    """A stash that rejects 'spam' in ``text`` (blocked_words) and holds links, with ``POLICY``."""
    register_temporarily("test_hold_links", HoldLinks)
    fields.setdefault("statement_policy", POLICY)
    return make_stash(
        slug,
        hooks=[
            {"hook": "keyword_blocklist", "params": {"words": ["spam"]}, "label": "Words", "position": 1},
            {"hook": "test_hold_links", "label": "Links", "position": 2},
        ],
        **fields,
    )


def judged(stash, **payload):
    """An item of ``stash`` with ``payload``, judged."""
    item = Content.objects.create(stash=stash, payload=payload)
    processing.judge([item.pk])
    return Content.objects.select_related("stash").get(pk=item.pk)
