"""Sources: a spec becomes a local folder of Python files plus metadata (specs, index client, archives, written-for version)."""
