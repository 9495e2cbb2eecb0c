"""Downstream: the files to read and the use sites in them (walk, scan, refs, sites, suppressions)."""
