"""List filters (django-filter): the query parameters that narrow a list, with a 400 per bad one.

A parameter given blank (``?stash=``) is refused, not read as absent; errors name the parameter,
as the serializers' do.
"""

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django_filters import fields

from stash.api.serializers import BLANK_PARAMETER
from stash.models import Content, Stash


class QueryForm(forms.Form):
    """The form of a filter set: a parameter given blank is an error of that parameter."""

    def clean(self):
        cleaned = super().clean()
        for name in self.fields:
            if self.data.get(name) == "":
                self.add_error(name, BLANK_PARAMETER)
        return cleaned


class StashChoiceField(fields.ModelChoiceField):
    """A stash named by its slug; a text that is no slug is looked up nowhere (PostgreSQL refuses a
    NUL in a query)."""

    default_error_messages = {"invalid_choice": "There is no stash slug=%(value)s."}

    def to_python(self, value):
        if value not in self.empty_values:
            try:
                validate_slug(value)
            except ValidationError:
                raise ValidationError(
                    self.error_messages["invalid_choice"], code="invalid_choice", params={"value": value}
                ) from None
        return super().to_python(value)


class StashFilter(django_filters.ModelChoiceFilter):
    field_class = StashChoiceField


class ContentFilter(django_filters.FilterSet):
    """Query parameters of the item list."""

    stash = StashFilter(
        queryset=Stash.objects.all(), to_field_name="slug", help_text="Only items of this stash (its slug)."
    )
    status = django_filters.ChoiceFilter(
        choices=Content.Status.choices,
        help_text="Only items with this status.",
        error_messages={"invalid_choice": '"%(value)s" is not a valid choice.'},
    )

    class Meta:
        model = Content
        fields = ["stash", "status"]
        form = QueryForm
