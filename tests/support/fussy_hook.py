"""A hook that fails on one kind of payload until it is fixed, for the failure store's tests.

register_temporarily("test_fussy", Fussy)
FIXED.clear()          # broken: it raises ValueError on payloads with a "colour"
FIXED.add(Fussy)       # the fix is deployed: it keeps them
"""

from stash import hooks, processing
from stash.models import Content

#: Holds ``Fussy`` once its fix is deployed.
FIXED: set[type] = set()


class Fussy(hooks.Filter):
    """Raises on payloads with ``colour`` until fixed; keeps everything else."""

    def filter(self, item):
        if Fussy not in FIXED and "colour" in item.payload:
            raise ValueError("unknown colour")
        return self.keep()


def judged_fussy_stash(make_stash, register_temporarily, colours, plain=0):
    """The stash "fussy" with one hook, Fussy (broken), and its judged items: ``colours`` that
    fail, ``plain`` that it keeps."""
    FIXED.clear()
    register_temporarily("test_fussy", Fussy)
    stash = make_stash("fussy", hooks=[{"hook": "test_fussy", "label": "Fussy", "params": {}}])
    items = [Content.objects.create(stash=stash, payload={"colour": n}) for n in range(colours)]
    items += [Content.objects.create(stash=stash, payload={"text": f"plain {n}"}) for n in range(plain)]
    processing.judge([item.pk for item in items])
    return stash
