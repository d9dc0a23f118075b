"""Create the demo stash "audit" with a few hooks, and a demo admin login."""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from stash.demo import create_demo


class Command(BaseCommand):
    help = 'Create (or reset) the demo stash "audit", its hooks and a demo admin login, and print the login.'

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--password", default="admin")

    def handle(self, *args, **options):
        stash = create_demo()
        User = get_user_model()
        user, _ = User.objects.get_or_create(username=options["username"], defaults={"email": "admin@example.com"})
        user.is_staff = user.is_superuser = True
        user.set_password(options["password"])
        user.save()
        self.stdout.write(f'Demo stash "{stash.slug}" with {stash.hooks.count()} hooks.')
        self.stdout.write(f"Demo login: {options['username']} / {options['password']}")
