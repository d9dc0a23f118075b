"""Who may do what: Django's model permissions, applied to stashes, items, hook configs, pipelines and examples."""

from rest_framework.permissions import BasePermission, DjangoModelPermissions

from stash import processing


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
    """The user has the Django permission ``perm`` (or every one of ``perms``)."""

    perm = ""
    perms = ()

    def has_permission(self, request, view):
        return request.user.has_perms(self.perms or (self.perm,))


class CanBulkSubmit(HasPerm):
    """Bulk submissions need ``stash.add_content``, whatever the stash."""

    perm = "stash.add_content"
    message = "Bulk submissions need the permission to add content."


class CanReadFailures(HasPerm):
    """Reading the failure store (items' trails, hooks' messages) needs ``stash.view_content``."""

    perm = "stash.view_content"
    message = "Reading the failure store needs the permission to view content."


class CanReprocess(HasPerm):
    """Judging an item again needs ``stash.change_content``."""

    perm = "stash.change_content"
    message = "Judging items again needs the permission to change content."


class CanReadQueue(HasPerm):
    """Reading a stash's accepted queue needs ``stash.view_content``."""

    perm = "stash.view_content"
    message = "Reading the queue needs the permission to view content."


class CanReview(HasPerm):
    """Deciding on, claiming and releasing items in review needs ``stash.view_content`` and
    ``stash.change_content``, as the admin's review page does."""

    perms = ("stash.view_content", "stash.change_content")
    message = "Reviewing needs the permissions to view and change content."


class CanSimulate(HasPerm):
    """Trying a payload against a stash's hooks needs ``stash.view_hookconfig``."""

    perm = "stash.view_hookconfig"
    message = "Simulating needs the permission to view hook configs."


class CanReorderHooks(HasPerm):
    """Reordering a stash's hooks needs ``stash.change_hookconfig``."""

    perm = "stash.change_hookconfig"
    message = "Reordering hooks needs the permission to change hook configs."


class ModelPermissions(DjangoModelPermissions):
    """The model permissions of the view's queryset, reading (``view_*``) included."""

    perms_map = {
        **DjangoModelPermissions.perms_map,
        "GET": ["%(app_label)s.view_%(model_name)s"],
        "HEAD": ["%(app_label)s.view_%(model_name)s"],
    }


class HookConfigPermissions(ModelPermissions):
    """Hook configs follow their model permissions, reading (``view_hookconfig``) included."""


class ExamplePermissions(ModelPermissions):
    """Golden examples follow their model permissions, reading (``view_example``) included."""


class CanReadPipeline(HasPerm):
    """Reading a stash's pipeline document and versions needs ``stash.view_hookconfig``."""

    perm = "stash.view_hookconfig"
    message = "Reading a stash's pipeline needs the permission to view hook configs."


class CanChangePipeline(HasPerm):
    """Restoring a version changes the stash and adds, changes and removes hooks: it needs all of
    those permissions (``processing.PIPELINE_PERMISSIONS``)."""

    perms = processing.PIPELINE_PERMISSIONS
    message = (
        "Changing a stash's pipeline needs the permissions to change stashes and to add, change and "
        "delete hook configs."
    )


class CanImportDocument(BasePermission):
    """Importing the request's document needs what ``processing.import_permissions`` says, as the
    admin's upload does: ``CanChangePipeline``'s, and for a document that carries golden examples
    (they replace the stash's) ``stash.add_example`` and ``stash.delete_example`` too."""

    examples_message = (
        "This document carries golden examples, which replace the stash's: that needs the "
        'permissions to add and delete examples (or leave "examples" out).'
    )

    def has_permission(self, request, view):
        missing = processing.missing_import_permissions(request.user, request.data)
        if set(missing) & set(processing.PIPELINE_PERMISSIONS):
            self.message = CanChangePipeline.message
        elif missing:
            self.message = self.examples_message
        return not missing


class CanRunExamples(HasPerm):
    """Running a stash's golden examples needs ``stash.view_example``."""

    perm = "stash.view_example"
    message = "Running golden examples needs the permission to view examples."


class CanMakeExample(HasPerm):
    """Making a golden example of an item needs ``stash.add_example``."""

    perm = "stash.add_example"
    message = "Making an example needs the permission to add examples."
