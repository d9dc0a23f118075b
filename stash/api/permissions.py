"""Who may do what: Django's model permissions, applied to stashes, items and hook configs."""
from rest_framework.permissions import BasePermission, DjangoModelPermissions

from .. import processing


class CanSubmit(BasePermission):
    """Submitting needs ``stash.add_content``, unless the stash takes anonymous submissions."""

    message = "You may not submit to this stash."

    def has_object_permission(self, request, view, obj):
        return processing.may_submit(request.user, obj)


class CanEditContent(BasePermission):
    """Changing an item's payload needs ``stash.change_content``, or having submitted it."""

    message = "You may not change this item."

    def has_object_permission(self, request, view, obj):
        own = obj.submitted_by_id is not None and obj.submitted_by_id == request.user.pk
        return own or request.user.has_perm("stash.change_content")


class HasPerm(BasePermission):
    """The user has the Django permission ``perm``."""

    perm = ""

    def has_permission(self, request, view):
        return request.user.has_perm(self.perm)


class CanBulkSubmit(HasPerm):
    """Bulk submissions need ``stash.add_content``, whatever the stash."""

    perm = "stash.add_content"
    message = "Bulk submissions need the permission to add content."


class CanReprocess(HasPerm):
    """Judging an item again needs ``stash.change_content``."""

    perm = "stash.change_content"
    message = "Judging items again needs the permission to change content."


class CanReadQueue(HasPerm):
    """Reading a stash's accepted queue needs ``stash.view_content``."""

    perm = "stash.view_content"
    message = "Reading the queue needs the permission to view content."


class CanSimulate(HasPerm):
    """Trying a payload against a stash's hooks needs ``stash.view_hookconfig``."""

    perm = "stash.view_hookconfig"
    message = "Simulating needs the permission to view hook configs."


class CanReorderHooks(HasPerm):
    """Reordering a stash's hooks needs ``stash.change_hookconfig``."""

    perm = "stash.change_hookconfig"
    message = "Reordering hooks needs the permission to change hook configs."


class HookConfigPermissions(DjangoModelPermissions):
    """Hook configs follow their model permissions, reading (``view_hookconfig``) included."""

    perms_map = {
        **DjangoModelPermissions.perms_map,
        "GET": ["%(app_label)s.view_%(model_name)s"],
        "HEAD": ["%(app_label)s.view_%(model_name)s"],
    }
