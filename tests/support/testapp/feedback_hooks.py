"""A hook that learns from reviewers: it records the feedback it gets in the shared cache (feedback tests)."""

import os

from django.core.cache import cache

from stash import hooks


@hooks.register("test_feedback_recorder")
class FeedbackRecorder(hooks.Filter):
    """Hold text with "?" in it; record each feedback in the cache, which the test process and the worker share."""

    def filter(self, item):
        return self.hold("asks a question", "question") if "?" in str(item.payload.get("text", "")) else self.keep()

    def feedback(self, item, verdict):
        cache.set(f"test_feedback_recorder:{item.id}", f"{verdict} pid {os.getpid()}", 300)
