"""What the status page tells about an item: its verdict in a plain sentence, and its trail in words.

    verdict_sentence(content, run)            # Sentence("Rejected", "contains blocked word 'spam' in text")
    trail_in_words(run.trail, technical=False)

A submitter reads the verdict, a filter's reason for a rejection, and what each hook did; never
an exception's text or what a hook only watched for (``technical=False``). Those stay for staff:
the admin's trail, and the status page for people who may view every item.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _, gettext_lazy

from stash.core import pipeline
from stash.models import Content, PipelineRun

Status = Content.Status

_OUTCOME_WORDS = {
    pipeline.KEPT: gettext_lazy("kept it"),
    pipeline.DROPPED: gettext_lazy("dropped it"),
    pipeline.TRANSFORMED: gettext_lazy("changed it"),
    pipeline.SKIPPED: gettext_lazy("was skipped"),
    pipeline.ERROR: gettext_lazy("failed"),
    pipeline.TIMEOUT: gettext_lazy("ran out of time"),
    pipeline.HELD: gettext_lazy("held it for review"),
    pipeline.OBSERVED: gettext_lazy("only watched"),
    pipeline.WAITING: gettext_lazy("asked an outside service, which has not answered yet"),
}
# How a submitter is told of a hook that failed: the failure is for staff to read.
_COULD_NOT_CHECK = gettext_lazy("could not check it")
_FAILURES = (pipeline.ERROR, pipeline.TIMEOUT)
# Outcomes whose message a submitter reads: a filter's reason, a transform's change, a skip.
_TOLD = (pipeline.DROPPED, pipeline.HELD, pipeline.TRANSFORMED, pipeline.SKIPPED)


@dataclass(frozen=True)
class Sentence:
    """The verdict as a submitter reads it: ``headline``, and the reason after it (may be blank)."""

    headline: str
    reason: str = ""


def verdict_sentence(content: Content, run: PipelineRun | None) -> Sentence:
    """``content``'s status as a plain sentence; ``run``: its latest run, if any.

    A rejection tells the reason of the filter that dropped it; an item that a hook failed on
    (an error, a timeout, attempts exhausted) "could not be checked", whatever its policy made
    of it; a verdict given in review says so.
    """
    status = content.status
    if status == Status.PENDING:
        return Sentence(_("Waiting for the hooks to judge it…"))
    if status == Status.PROCESSING:
        return Sentence(_("Being judged…"))
    if status == Status.WAITING:
        return Sentence(_("Being checked by a moderation service…"))
    could_not = Sentence(_("Could not be checked; a moderator will look at it"))
    if status == Status.FAILED:
        return could_not
    if content.reviewed_at is not None:
        return Sentence(_("Accepted") if status == Status.ACCEPTED else _("Rejected by a moderator"))
    if status == Status.ACCEPTED:
        return Sentence(_("Accepted"))
    deciding = _deciding_entry(content, run)
    outcome = deciding.get("outcome") if deciding else None
    if outcome in _FAILURES:
        return could_not
    if status == Status.HELD:
        return Sentence(_("Waiting for a moderator"))
    return Sentence(_("Rejected"), deciding.get("message", "") if deciding and outcome == pipeline.DROPPED else "")


def _deciding_entry(content: Content, run: PipelineRun | None) -> dict | None:
    """The trail entry of the hook that gave ``content`` its verdict: the last of its run (the
    first drop, hold or failure under a rejecting or holding policy ends the run), or None."""
    if run is None or not run.trail or run.revision != content.processed_revision or run.outcome != content.status:
        return None
    return run.trail[-1]


def trail_in_words(trail: list[dict], technical: bool = True) -> list[dict]:
    """One sentence per hook that ran: who, what it did, and why (unless ``technical`` is off and
    the why is a failure's text or what an observing hook would have done)."""
    steps = []
    for entry in trail:
        outcome = entry.get("outcome")
        who = entry.get("label") or entry.get("hook", "?")
        did = _OUTCOME_WORDS.get(outcome, outcome or "")
        why = entry.get("message", "")
        if not technical:
            did = _COULD_NOT_CHECK if outcome in _FAILURES else did
            why = why if outcome in _TOLD else ""
        steps.append({"who": who, "did": did, "why": why, "outcome": outcome, "cached": bool(entry.get("cached"))})
    return steps
