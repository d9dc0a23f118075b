"""A stash's pipeline versions: every change kept (``PipelineVersion``, written by each change's
``one_change``), told apart, and restored.

    diff = compare(stash, 3, 5)          # diff.changes: ["No spam disabled"], diff.lines: unified diff
    plan = restore(stash, 3)             # version 3's hooks and settings again, as a new version
    run.version.document                 # the hooks and params that judged a run
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from stash.core import documents
from stash.models import PipelineVersion, Stash
from stash.processing.importing import ImportPlan, import_document, public_document


@dataclass(frozen=True)
class VersionDiff:
    """What changed from version ``old`` to version ``new`` of a stash."""

    old: PipelineVersion
    new: PipelineVersion
    changes: list[str]
    lines: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {"from": self.old.number, "to": self.new.number, "changes": self.changes, "diff": "\n".join(self.lines)}


def shown(version: PipelineVersion) -> dict[str, Any]:
    """A version's document as anyone may see it (no secrets, no config ids)."""
    return public_document(version.document)


def compare(stash: Stash, old: int, new: int) -> VersionDiff:
    """The difference between versions ``old`` and ``new`` of ``stash`` (either may be the later);
    ``PipelineVersion.DoesNotExist`` naming the missing one."""
    versions = {version.number: version for version in stash.versions.filter(number__in=[old, new])}
    for number in (old, new):
        if number not in versions:
            raise PipelineVersion.DoesNotExist(
                _("%(stash)s has no version %(number)d.") % {"stash": stash.slug, "number": number}
            )
    before, after = versions[old], versions[new]
    return VersionDiff(
        old=before,
        new=after,
        changes=documents.changes(before.document, after.document),
        lines=documents.diff_lines(shown(before), shown(after), f"version {old}", f"version {new}"),
    )


def restore(stash: Stash, number: int) -> ImportPlan:
    """Make ``stash``'s pipeline what version ``number`` was, as a new version (its examples stay,
    and run first: see ``import_document``). ``PipelineVersion.DoesNotExist`` if there is none."""
    try:
        version = stash.versions.get(number=number)
    except PipelineVersion.DoesNotExist:
        raise PipelineVersion.DoesNotExist(
            _("%(stash)s has no version %(number)d.") % {"stash": stash.slug, "number": number}
        ) from None
    return import_document(stash, version.document, note=_("restore of version %(number)d") % {"number": number})
