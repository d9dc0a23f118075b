"""A pipeline run as the admin shows it wherever an item is looked at (its page, the review queue): the
hooks' trail, numbered in the order they ran, then its sinks' deliveries, apart."""

from django.template.loader import render_to_string
from django.utils.translation import gettext_lazy as _

from stash import processing


def trail_table(run):
    """A run's trail as a read-only table: hook, outcome, reason, duration, and the version that judged it;
    then its sinks' deliveries."""
    if run is None:
        return _("Not judged yet.")
    deliveries = processing.deliveries_of(run.content_id, run.revision)
    return render_to_string("admin/stash/trail.html", {"trail": run.trail, "run": run, "deliveries": deliveries})
