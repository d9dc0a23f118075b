"""Create the demo stash "audit" with a few hooks if it is missing, and a demo admin login."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from stash.management.demo import SLUG, create_demo
from stash.models import Stash


class Command(BaseCommand):
    help = (
        'Create the demo stash "audit" and its hooks if there is no stash "audit" (an existing one is left '
        "as it is: hooks, counters, items), and a demo admin login if that user is missing, and print the "
        "login. --reset puts the demo stash's fields and hooks back as the demo defines them, and the "
        "login's password."
    )

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--password", default="admin")
        parser.add_argument(
            "--reset",
            action="store_true",
            help="Reset the demo stash: its fields and hooks as the demo defines them (the hooks "
            "are created anew, their counters at 0); its items stay.",
        )

    def handle(self, *args, **options):
        existed = Stash.objects.filter(slug=SLUG).exists()
        stash = create_demo(reset=options["reset"])
        User = get_user_model()
        user, created = User.objects.get_or_create(
            username=options["username"], defaults={"email": "admin@example.com"}
        )
        if created or options["reset"]:
            user.is_staff = user.is_superuser = True
            user.set_password(options["password"])
            user.save()
        hooks = stash.hooks.count()
        if options["reset"]:
            self.stdout.write(f'Demo stash "{stash.slug}" reset: {hooks} hooks, as the demo defines them.')
        elif not existed:
            self.stdout.write(f'Demo stash "{stash.slug}" with {hooks} hooks.')
        else:
            self.stdout.write(
                f'Demo stash "{stash.slug}" exists ({hooks} hooks): left as it is (stash_demo --reset resets it).'
            )
        if created or options["reset"]:
            self.stdout.write(f"Demo login: {options['username']} / {options['password']}")
        else:
            self.stdout.write(
                f'Demo login "{options["username"]}" exists: left as it is (stash_demo --reset sets '
                "its password again)."
            )
