"""Middleware: who makes the changes a request makes (for the pipeline versions they record), and the
admin's refusal of addresses no database can read."""

import re

from django.shortcuts import render
from django.utils.translation import gettext as _

from stash.db.versioning import authored_by

# PostgreSQL cannot compare a text with a NUL in it (it raises), and no database holds a lone surrogate.
_UNREADABLE = re.compile("[\x00\ud800-\udfff]")
# The longest year, month or day of a date: "9999".
_DATE_PART_LENGTH = 4
_DATE_PARTS = ("__year", "__month", "__day")


class ChangeAuthorMiddleware:
    """Changes made while handling a request are its user's: ``request.user``, read when a version is
    written (an API view authenticates after the middleware has run, and sets it then)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with authored_by(lambda: getattr(request, "user", None)):
            return self.get_response(request)


class AdminQueryMiddleware:
    """An admin page whose address has a NUL or a lone surrogate in a query parameter (or a list's date
    hierarchy a year, month or day longer than any) answers 400 naming the parameter, before a list
    filter, a search, an ordering or a date reaches the database with it.

    One check for every admin page (stash's lists, auth's, axes', the stash tools); the API checks its
    own parameters and names them in its JSON errors.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if "admin" not in request.resolver_match.app_names:
            return None
        problem = unreadable_query(request.GET)
        if not problem:
            return None
        return render(request, "stash/error.html", {"title": _("Bad request"), "message": problem}, status=400)


def unreadable_query(query):
    """Why ``query`` (a ``QueryDict``) cannot be read, naming its first bad parameter, or "" if it can.

    A date hierarchy's year, month and day (``<field>__year`` …) are numbers of a few digits: the
    admin turns a longer one into a date without catching the ``OverflowError``.
    """
    for name, values in query.lists():
        if name.endswith(_DATE_PARTS) and any(len(value) > _DATE_PART_LENGTH for value in values):
            return _("The parameter “%(name)s” of this address is no year, month or day.") % {"name": name}
        for text in [name, *values]:
            match = _UNREADABLE.search(text)
            if match is None:
                continue
            what = _("a NUL character (%00)") if match.group() == "\x00" else _("an unpaired surrogate")
            return _(
                "The parameter “%(name)s” of this address contains %(what)s, which no list can filter, "
                "search or sort by."
            ) % {"name": name.replace("\x00", "%00"), "what": what}
    return ""
