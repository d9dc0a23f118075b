"""The models' common base: ``LoadedStateModel`` remembers the tracked fields as last read or written."""

import copy
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Self

from django.db import models


class LoadedStateModel(models.Model):
    """Remembers ``TRACKED_FIELDS`` as last read from or written to the database.

    The values are copied, so a JSON field edited in place still counts as changed, and
    ``refresh_from_db`` makes what it read the new baseline. An abstract model, so that
    migrations name only ``models.Model`` among a model's bases, never this class.
    """

    TRACKED_FIELDS: tuple[str, ...] = ()

    class Meta:
        abstract = True

    @classmethod
    def from_db(cls, db: str | None, field_names: Collection[str], values: Collection[Any]) -> Self:
        instance = super().from_db(db, field_names, values)
        instance._remember([f for f in cls.TRACKED_FIELDS if f in field_names])
        return instance

    def refresh_from_db(
        self,
        using: str | None = None,
        fields: Iterable[str] | None = None,
        from_queryset: models.QuerySet[Self] | None = None,
    ) -> None:
        super().refresh_from_db(using=using, fields=fields, from_queryset=from_queryset)
        deferred = self.get_deferred_fields()
        self._remember(
            [
                f
                for f in self.TRACKED_FIELDS
                if f not in deferred and (fields is None or f in fields or f.removesuffix("_id") in fields)
            ]
        )

    def _remember(self, fields: Iterable[str] | None = None, copies: Mapping[str, Any] | None = None) -> None:
        """``copies``: fresh copies of some of the values, which the caller could make more cheaply."""
        fields = self.TRACKED_FIELDS if fields is None else fields
        copies = copies or {}
        self._loaded = {
            **getattr(self, "_loaded", {}),
            **{f: copies[f] if f in copies else copy.deepcopy(getattr(self, f)) for f in fields},
        }

    def _changed(self, fields: Iterable[str]) -> bool:
        """True unless every one of ``fields`` is known and equal to what was loaded."""
        loaded = getattr(self, "_loaded", None)
        return loaded is None or any(f not in loaded or loaded[f] != getattr(self, f) for f in fields)
