"""Two bundled batched hooks, forced to judge one item at a time, for the hook rows (``bench.hooks``).

    profanity_one_at_a_time        # profanity, one model call per item
    moderation_api_one_at_a_time   # moderation_api, one request per item

Each is its bundled hook with the base class's ``filter_many`` (``filter`` per item), so the runner
(``pipeline.batched``) judges their stash's items one ``Pipeline.run`` at a time, as it does any hook
that is not batched; params and decisions are the bundled hook's.
"""

from stash.core import pipeline
from stash.core.registry import register
from stash.hooks.base import Filter
from stash.hooks.classifiers import Profanity
from stash.hooks.services import ModerationApi


@register("profanity_one_at_a_time")
class ProfanityOneAtATime(Profanity):
    """The profanity hook, called once per item (benchmark only)."""

    filter_many = Filter.filter_many  # marked per_item: not batched

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        return Profanity.filter_many(self, [item])[0]


@register("moderation_api_one_at_a_time")
class ModerationApiOneAtATime(ModerationApi):
    """The moderation_api hook, one request per item (benchmark only)."""

    filter_many = Filter.filter_many  # marked per_item: not batched

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        return ModerationApi.filter_many(self, [item])[0]
