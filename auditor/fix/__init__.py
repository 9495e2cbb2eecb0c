"""Fix: LibCST codemods for the findings that can be fixed mechanically."""
