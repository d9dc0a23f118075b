"""stash: content pipelines run by admin-managed hooks."""
