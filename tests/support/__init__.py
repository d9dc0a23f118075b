"""What the tests share: a real worker process, hook and metrics helpers, version pins, threads, and a
test-only app whose hooks misbehave on purpose."""
