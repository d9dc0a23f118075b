"""What the admin says after sending more than a batch to be judged again: links that follow their
judging (``views.judging``'s page, by stash) and the items still waiting."""

from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.translation import gettext

from stash.models import WAITING_STATUSES

# The query of the judging page and of its counts: how many items were sent, and when (seconds since 1970).
SENT = "sent"
SINCE = "since"


def progress_url(stash_id, sent, since):
    """The page that follows judging again the ``sent`` items of the stash ``stash_id``, sent at ``since``."""
    query = urlencode({SENT: sent, SINCE: f"{since.timestamp():.3f}"})
    return f"{reverse('admin:stash_stash_judging', args=[stash_id])}?{query}"


def waiting_url(stash_id=None):
    """The items list of the items still waiting to be judged (of the stash ``stash_id``, if given)."""
    query = {"status__in": ",".join(WAITING_STATUSES)}
    if stash_id:
        query["stash__id__exact"] = stash_id
    return f"{reverse('admin:stash_content_changelist')}?{urlencode(query)}"


def follow_message(sent_by_stash, since, listed_stash=None):
    """Past a batch: they are judged over a while; a link to each stash's judging (``sent_by_stash``:
    {stash: how many were sent}, at ``since``), and one to the items still waiting (of ``listed_stash``,
    the id the items list was filtered by, if any)."""
    links = format_html_join(
        ", ",
        '<a href="{}">{}</a>',
        (
            (progress_url(stash.pk, sent, since), stash)
            for stash, sent in sorted(sent_by_stash.items(), key=lambda pair: pair[0].slug)
        ),
    )
    return format_html(
        '{} {} {}. <a href="{}">{}</a>',
        gettext("They are judged over a while, a batch at a time."),
        gettext("Follow their judging:"),
        links,
        waiting_url(listed_stash),
        gettext("Follow the items still waiting to be judged"),
    )
