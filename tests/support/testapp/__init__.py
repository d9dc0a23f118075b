"""A test-only app whose hooks sleep, hang, raise or kill their worker, to test isolation."""
