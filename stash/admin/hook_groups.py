"""A stash's hooks in the two groups its pages show: the filters and transforms, numbered 1..n in the order
they run, and the sinks apart, which act on the verdict once those have decided it::

    groups = in_groups(stash.hooks.enabled().in_order())
    groups.ordered   # [(1, needs_text), (2, no_spam)]: (its number, the hook config)
    groups.sinks     # [(1, notify)]

The stash's page numbers the rows of its hooks table this way (``number_in_groups``); the simulate and
replay pages list the hooks they run this way.
"""

from dataclasses import dataclass, field
from typing import Any

from stash.core import pipeline


def is_sink(hook: Any) -> bool:
    """Whether ``hook`` (a hook config, or a pipeline's step) is a sink; a hook config whose hook is not
    registered (any more) is not."""
    if isinstance(hook, pipeline.Step):
        return hook.kind == "sink"
    hook_class = hook.hook_class
    return hook_class is not None and hook_class.kind == "sink"


@dataclass(frozen=True)
class HookGroups:
    """Hooks in run order, split: ``ordered`` the filters and transforms, ``sinks`` the sinks; each a list of
    (its number in its group from 1, the hook)."""

    ordered: list[tuple[int, Any]] = field(default_factory=list)
    sinks: list[tuple[int, Any]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.ordered or self.sinks)


def in_groups(hooks: Any) -> HookGroups:
    """``hooks`` (hook configs or a pipeline's steps, in run order) in their two groups, each numbered
    from 1 without gaps, whatever their stored positions."""
    groups = HookGroups()
    for hook in hooks:
        group = groups.sinks if is_sink(hook) else groups.ordered
        group.append((len(group) + 1, hook))
    return groups


def number_in_groups(configs: Any) -> None:
    """Mark each of ``configs`` (in run order) as a sink (``is_sink``: it runs after the verdict, shown
    apart, ``sink_number`` its number among them) or give it its number among the filters and
    transforms (``order_number``: 1, 2, ...)."""
    groups = in_groups(configs)
    for number, config in groups.ordered:
        config.is_sink, config.order_number = False, number
    for number, config in groups.sinks:
        config.is_sink, config.sink_number = True, number
