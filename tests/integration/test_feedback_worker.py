"""Feedback reaches the hook on the sinks worker: a reviewer's approval of an item the hook held is
sent, once committed, to the sinks queue, and the sinks worker (a process of its own) calls the
hook's ``feedback`` with the verdict."""

import os

import pytest
from django.core.cache import cache

from stash import processing
from stash.models import Content

from ..support.review import reviewer
from ..support.worker import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_an_approval_reaches_the_hook_on_the_sinks_worker(worker, sink_worker, make_stash, django_user_model):
    stash = make_stash("learning", hooks=[("test_feedback_recorder", {})])
    item = Content.objects.create(stash=stash, payload={"text": "why?"})
    wait_for(lambda: Content.objects.get(pk=item.pk).status == "held", timeout=20, message="held by the hook")

    processing.approve(Content.objects.filter(pk=item.pk), reviewer(django_user_model, "rita"))

    key = f"test_feedback_recorder:{item.pk}"
    wait_for(lambda: cache.get(key) is not None, timeout=20, message="the feedback")
    verdict, _pid, pid = cache.get(key).partition(" pid ")
    assert verdict == "accepted" and int(pid) != os.getpid()
