"""The tool's version, in the bottom layer so that every stage can name it without importing the
package's public entry point (which loads the audit lazily)."""

from __future__ import annotations

__version__ = "0.1.0"
