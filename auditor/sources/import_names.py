"""A distribution's import names: what its own name says, the common exceptions, and what the
distributions installed beside apidrift declare (their metadata; nothing imported)."""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Iterable

# Distributions whose import name their own name does not say, for the most common cases. Used only to
# tell which of the project's imports are accounted for; a package's own import names, when known, win.
KNOWN_IMPORT_NAMES: dict[str, tuple[str, ...]] = {
    "pyyaml": ("yaml",),
    "pillow": ("PIL",),
    "scikit-learn": ("sklearn",),
    "scikit-image": ("skimage",),
    "beautifulsoup4": ("bs4",),
    "python-dateutil": ("dateutil",),
    "opencv-python": ("cv2",),
    "opencv-python-headless": ("cv2",),
    "opencv-contrib-python": ("cv2",),
    "protobuf": ("google.protobuf",),
    "pyzmq": ("zmq",),
    "pyjwt": ("jwt",),
    "attrs": ("attr", "attrs"),
    "setuptools": ("setuptools", "pkg_resources", "_distutils_hack"),
    "pymupdf": ("fitz", "pymupdf"),
    "pycryptodome": ("Crypto",),
    "pyserial": ("serial",),
    "dnspython": ("dns",),
    "py-cpuinfo": ("cpuinfo",),
    "pyopenssl": ("OpenSSL",),
    "msgpack-python": ("msgpack",),
    "python-multipart": ("multipart", "python_multipart"),
    "python-dotenv": ("dotenv",),
    "faiss-cpu": ("faiss",),
    "pytorch-lightning": ("pytorch_lightning", "lightning"),
    "ruamel-yaml": ("ruamel.yaml",),
    "google-api-python-client": ("googleapiclient", "apiclient"),
    "mysqlclient": ("MySQLdb",),
    "psycopg2-binary": ("psycopg2",),
    "typing-extensions": ("typing_extensions",),
}


def guessed_names(name: str) -> tuple[str, ...]:
    """Import names a distribution's own name says: `foo-bar` -> foo_bar and foo.bar (namespace packages)."""
    names = [name.replace("-", "_"), name.replace("-", ".")]
    for prefix in ("python-", "py-"):
        if name.startswith(prefix) and len(name) > len(prefix):
            names.append(name[len(prefix) :].replace("-", "_"))
    if name.endswith("-python"):
        names.append(name[: -len("-python")].replace("-", "_"))
    names += KNOWN_IMPORT_NAMES.get(name, ())
    names += _installed_import_names(name)
    return tuple(dict.fromkeys(names))


def provides(import_names: Iterable[str], module: str) -> bool:
    """Whether a distribution with these import names provides `module` (a dotted import of the project).

    Case matters as it does for imports, except that a distribution's name is case-insensitive: a
    name-derived guess is compared without case.
    """
    lowered = module.lower()
    return any(lowered == n.lower() or lowered.startswith(n.lower() + ".") for n in import_names)


_installed: dict[str, tuple[str, ...]] | None = None


def _installed_import_names(name: str) -> tuple[str, ...]:
    """What the distributions installed beside apidrift say they provide (their metadata; nothing imported)."""
    global _installed
    if _installed is None:
        mapping: dict[str, list[str]] = {}
        try:
            for module, dists in importlib.metadata.packages_distributions().items():
                for dist in dists:
                    mapping.setdefault(re.sub(r"[-_.]+", "-", dist).lower(), []).append(module)
        except Exception:  # broken metadata of some installed distribution: no extra names
            mapping = {}
        _installed = {k: tuple(sorted(set(v))) for k, v in mapping.items()}
    return _installed.get(name, ())


def normal_name(name: str) -> str:
    """A distribution's name as PEP 503 normalises it."""
    return re.sub(r"[-_.]+", "-", name).lower()
