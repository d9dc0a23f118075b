"""Integration tests use the worker fixtures of tests/conftest.py."""
