"""A stash whose golden examples may answer for an asynchronous hook: "Vendor" (``moderation_api`` in
async mode, which runs that only look never ask) before "No spam" (a blocklist of "spam")."""

from typing import Any

SECRET = "s3cret-s3cret-s3cret"


def vendor_stash(make_stash: Any, settings: Any, url: str = "http://127.0.0.1:9/moderate", secret: str = SECRET) -> Any:
    """The stash "vendor" (``make_stash`` and ``settings`` are the fixtures); its service at ``url``."""
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    params = {"url": url, "secret": secret, "fields": ["text"], "mode": "async"}
    return make_stash(
        "vendor",
        hooks=[
            {"hook": "moderation_api", "label": "Vendor", "params": params, "position": 1},
            {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}, "position": 2},
        ],
    )
