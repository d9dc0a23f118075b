"""Template filters of stash (``stash_format``)."""
