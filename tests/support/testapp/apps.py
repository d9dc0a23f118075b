from django.apps import AppConfig


class TestAppConfig(AppConfig):
    name = "tests.support.testapp"
    label = "stash_testapp"
