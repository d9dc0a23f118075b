"""stash_reprocess --failure-group: re-drive a group of the failure store from the command line."""

import io

import pytest
from django.core.management import CommandError, call_command

from stash import processing
from stash.models import Content

from ..support.fussy_hook import FIXED, Fussy, judged_fussy_stash

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(make_stash, register_temporarily):
    judged_fussy_stash(make_stash, register_temporarily, colours=2)
    yield processing.failures.groups()[0].key
    FIXED.clear()


def run(*args):
    out = io.StringIO()
    call_command("stash_reprocess", *args, stdout=out)
    return out.getvalue()


def test_the_group_is_sent_again_and_accepted_after_the_fix(key):
    FIXED.add(Fussy)
    out = run("--failure-group", key)
    assert "Failures of Fussy (ValueError, version" in out and "in fussy: 2 item(s)." in out
    assert "2 item(s) sent to be judged again." in out

    processing.judge(list(processing.failures.items_of(key).values_list("pk", flat=True)))
    assert processing.redriving.outcome(key)["accepted"] == 2


def test_an_unknown_group_or_a_mixed_selection_is_refused(key):
    with pytest.raises(CommandError, match="No group of failures 'feedfeedfeedfeed'"):
        run("--failure-group", "feedfeedfeedfeed")
    with pytest.raises(CommandError, match="give no ids, --stash or --status with it"):
        run("--failure-group", key, "--stash", "fussy")
    assert not Content.objects.filter(status="pending").exists()
