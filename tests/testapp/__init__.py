"""A test-only app whose hooks sleep, raise or kill their worker, to test isolation."""
