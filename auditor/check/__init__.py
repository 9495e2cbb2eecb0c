"""Check: each use site bound against a version (bind) and compared across versions (checked)."""
