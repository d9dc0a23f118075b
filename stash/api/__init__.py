"""The REST API (Django REST framework): submit, read and consume content; manage hooks."""
