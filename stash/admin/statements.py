"""Statements of reasons in the admin: read-only, on their item's page."""

from django.template.loader import render_to_string


def statements_table(content):
    """``content``'s statements of reasons, newest first, as a read-only table."""
    rows = content.statements.select_related("reviewer", "hook_config").order_by("-decided_at", "-pk")
    return render_to_string("admin/stash/statements.html", {"statements": list(rows)})
