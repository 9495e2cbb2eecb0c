"""Safe extraction: hostile entries are skipped, bombs refused, non-archives rejected cleanly."""

from __future__ import annotations

import io
import json
import shutil
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from apidrift.auditor.sources.archive import (
    MANIFEST,
    ExtractLimits,
    archive_kind,
    compiled_module_name,
    cython_module_name,
    extract_archive,
    read_extraction,
)
from apidrift.auditor.sources.specs import SourceError


def add_file(tar: tarfile.TarFile, name: str, data: bytes = b"x = 1\n") -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def add_special(tar: tarfile.TarFile, name: str, kind: bytes, linkname: str = "") -> None:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    tar.addfile(info)


def make_tar(path: Path, files: dict[str, bytes], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tar:
        for name, data in files.items():
            add_file(tar, name, data)
    return path


def make_zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def listing(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def assert_nothing_left(parent: Path, dest: Path) -> None:
    assert not dest.exists()
    assert not [p for p in parent.iterdir() if p.name.startswith(".tmp-")]


def test_sdist_keeps_sources_and_metadata_and_strips_top_folder(tmp_path: Path) -> None:
    archive = make_tar(
        tmp_path / "demo-1.0.tar.gz",
        {
            "demo-1.0/PKG-INFO": b"Name: demo\n",
            "demo-1.0/pyproject.toml": b"[project]\n",
            "demo-1.0/setup.cfg": b"",
            "demo-1.0/README.md": b"# demo\n",
            "demo-1.0/src/demo/__init__.py": b"",
            "demo-1.0/src/demo/core.pyi": b"def f() -> int: ...\n",
            "demo-1.0/src/demo/_speed.pyx": b"cdef int x\n",
            "demo-1.0/src/demo/data.bin": b"\0\1",
            "demo-1.0/src/demo.egg-info/top_level.txt": b"demo\n",
            "demo-1.0/src/demo.egg-info/SOURCES.txt": b"src/demo/__init__.py\n",
        },
    )
    result = extract_archive(archive, tmp_path / "out")
    assert result.kind == "sdist" and result.stripped == "demo-1.0"
    assert listing(result.tree) == {
        "PKG-INFO",
        "pyproject.toml",
        "setup.cfg",
        "src/demo/__init__.py",
        "src/demo/core.pyi",
        "src/demo/_speed.pyx",  # a Cython source: what the compiled module binds (its `__all__`)
        "src/demo.egg-info/top_level.txt",
        "src/demo.egg-info/SOURCES.txt",
    }
    assert result.files == 8
    assert read_extraction(tmp_path / "out") == result


def test_wheel_is_not_stripped_and_maps_purelib(tmp_path: Path) -> None:
    archive = make_zip(
        tmp_path / "demo-1.0-py3-none-any.whl",
        {
            "demo/__init__.py": b"",
            "demo-1.0.dist-info/METADATA": b"Name: demo\n",
            "demo-1.0.dist-info/LICENSE": b"MIT\n",
            "demo-1.0.data/purelib/extra_mod.py": b"",
            "demo-1.0.data/scripts/tool.py": b"",
        },
    )
    result = extract_archive(archive, tmp_path / "out")
    assert result.kind == "wheel" and result.stripped is None
    assert listing(result.tree) == {
        "demo/__init__.py",
        "demo-1.0.dist-info/METADATA",
        "demo-1.0.dist-info/LICENSE",
        "extra_mod.py",
    }


def test_compiled_modules_are_recorded_not_extracted(tmp_path: Path) -> None:
    archive = make_zip(
        tmp_path / "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl",
        {
            "demo/__init__.py": b"",
            "demo/_ext.cpython-311-x86_64-linux-gnu.so": b"\x7fELF",
            "demo/sub/_fast.abi3.so": b"\x7fELF",
            "_top.pyd": b"MZ",
            "demo.libs/libgomp-a34b3233.so.1.0.0": b"\x7fELF",
        },
    )
    result = extract_archive(archive, tmp_path / "out")
    assert result.compiled == (
        "_top.pyd",
        "demo/_ext.cpython-311-x86_64-linux-gnu.so",
        "demo/sub/_fast.abi3.so",
    )
    assert listing(result.tree) == {"demo/__init__.py"}


@pytest.mark.parametrize(
    ("path", "dotted"),
    [
        ("pkg/sub/_ext.cpython-311-x86_64-linux-gnu.so", "pkg.sub._ext"),
        ("_yaml.cp311-win_amd64.pyd", "_yaml"),
        ("pkg/mod.so", "pkg.mod"),
        ("pkg.libs/libfoo-1.so", None),
        ("pkg/readme.txt", None),
    ],
)
def test_compiled_module_name(path: str, dotted: str | None) -> None:
    assert compiled_module_name(path) == dotted


def test_traversal_and_absolute_paths_are_skipped(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    archive = make_tar(
        tmp_path / "evil-1.0.tar.gz",
        {
            "evil-1.0/ok.py": b"",
            "../escape.py": b"boom",
            "/abs.py": b"boom",
            "evil-1.0/../../escape2.py": b"boom",
            "evil-1.0/pkg/./fine.py": b"",
        },
    )
    result = extract_archive(archive, work / "out")
    assert result.skipped == {"unsafe path": 3}
    # Unsafe entries don't count against stripping the top folder.
    assert listing(result.tree) == {"ok.py", "pkg/fine.py"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil-1.0.tar.gz", "work"]
    assert not Path("/abs.py").exists()


def test_zip_traversal_and_drive_paths_are_skipped(tmp_path: Path) -> None:
    archive = make_zip(
        tmp_path / "evil-1.0.zip",
        {
            "evil-1.0/ok.py": b"",
            "evil-1.0/../../up.py": b"",
            "C:/win.py": b"",
            "evil-1.0\\..\\..\\bs.py": b"",
        },
    )
    result = extract_archive(archive, tmp_path / "out")
    assert result.skipped == {"unsafe path": 3}
    assert listing(result.tree) == {"ok.py"}


def test_links_and_devices_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "links-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        add_file(tar, "links-1.0/pkg/__init__.py")
        add_special(tar, "links-1.0/pkg/sym.py", tarfile.SYMTYPE, "/etc/passwd")
        add_special(tar, "links-1.0/pkg/hard.py", tarfile.LNKTYPE, "links-1.0/pkg/__init__.py")
        add_special(tar, "links-1.0/pkg/dev.py", tarfile.CHRTYPE)
        add_special(tar, "links-1.0/pkg/fifo.py", tarfile.FIFOTYPE)
    result = extract_archive(path, tmp_path / "out")
    assert result.skipped == {"device or special file": 2, "link": 2}
    assert listing(result.tree) == {"pkg/__init__.py"}
    assert not any(p.is_symlink() for p in result.tree.rglob("*"))


def test_zip_symlink_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("demo/__init__.py", b"")
        link = zipfile.ZipInfo("demo/link.py")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    result = extract_archive(path, tmp_path / "out")
    assert result.skipped == {"link": 1}
    assert listing(result.tree) == {"demo/__init__.py"}


@pytest.mark.parametrize(
    "filename",
    ["fake-1.0.tar.gz", "fake-1.0.tgz", "fake-1.0.tar.bz2", "fake-1.0.zip", "fake-1.0-py3-none-any.whl"],
)
def test_not_an_archive_is_a_clean_error(tmp_path: Path, filename: str) -> None:
    path = tmp_path / filename
    path.write_bytes(b"<!DOCTYPE html><html><body>Not Found</body></html>\n" * 20)
    dest = tmp_path / "out"
    with pytest.raises(SourceError, match=filename.replace(".", r"\.")) as info:
        extract_archive(path, dest)
    assert "\n" not in str(info.value)
    assert_nothing_left(tmp_path, dest)


def test_truncated_archive_is_a_clean_error(tmp_path: Path) -> None:
    good = make_tar(tmp_path / "good.tar.gz", {f"t-1.0/m{i}.py": bytes(range(256)) * 40 for i in range(20)})
    path = tmp_path / "t-1.0.tar.gz"
    path.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(SourceError):
        extract_archive(path, tmp_path / "out")
    assert_nothing_left(tmp_path, tmp_path / "out")


def test_unknown_suffix(tmp_path: Path) -> None:
    path = tmp_path / "x.rpm"
    path.write_bytes(b"")
    with pytest.raises(SourceError, match="neither a wheel"):
        extract_archive(path, tmp_path / "out")
    assert (
        archive_kind("x.tar.gz") == "sdist"
        and archive_kind("x.WHL") == "wheel"
        and archive_kind("x.egg") is None
    )


def test_size_bomb_is_refused(tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "bomb-1.0.tar.gz", {"bomb-1.0/big.py": b"#" * 5000})
    with pytest.raises(SourceError, match="more than 1000 bytes"):
        extract_archive(archive, tmp_path / "out", limits=ExtractLimits(max_bytes=1000))
    assert_nothing_left(tmp_path, tmp_path / "out")


def test_zip_size_bomb_is_refused(tmp_path: Path) -> None:
    archive = make_zip(
        tmp_path / "bomb-1.0-py3-none-any.whl", {f"bomb/m{i}.py": b"\0" * 4000 for i in range(5)}
    )
    with pytest.raises(SourceError, match="bytes"):
        extract_archive(archive, tmp_path / "out", limits=ExtractLimits(max_bytes=10_000))
    assert_nothing_left(tmp_path, tmp_path / "out")


def test_file_count_bomb_is_refused(tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "many-1.0.tar.gz", {f"many-1.0/m{i}.py": b"" for i in range(10)})
    with pytest.raises(SourceError, match="more than 5 files"):
        extract_archive(archive, tmp_path / "out", limits=ExtractLimits(max_files=5))
    assert_nothing_left(tmp_path, tmp_path / "out")


def test_skipped_bulk_is_bounded_for_tar(tmp_path: Path) -> None:
    archive = make_tar(
        tmp_path / "bulk-1.0.tar.gz", {"bulk-1.0/blob.bin": b"\0" * 50_000, "bulk-1.0/a.py": b""}
    )
    with pytest.raises(SourceError, match="refused"):
        extract_archive(archive, tmp_path / "out", limits=ExtractLimits(max_scanned_bytes=10_000))
    with pytest.raises(SourceError, match="entries"):
        extract_archive(archive, tmp_path / "out", limits=ExtractLimits(max_entries=1))


def test_large_metadata_file_is_skipped(tmp_path: Path) -> None:
    archive = make_zip(
        tmp_path / "demo-1.0-py3-none-any.whl",
        {
            "demo/__init__.py": b"",
            "demo-1.0.dist-info/RECORD": b"x" * 2000,
            "demo-1.0.dist-info/METADATA": b"Name: demo\n",
        },
    )
    result = extract_archive(archive, tmp_path / "out", limits=ExtractLimits(max_metadata_file_bytes=1000))
    assert result.skipped == {"large metadata file": 1}
    assert listing(result.tree) == {"demo/__init__.py", "demo-1.0.dist-info/METADATA"}


def test_duplicate_entries_last_one_wins(tmp_path: Path) -> None:
    path = tmp_path / "dup-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        add_file(tar, "dup-1.0/mod.py", b"first = 1\n")
        add_file(tar, "dup-1.0/mod.py", b"second = 2\n")
        add_file(tar, "dup-1.0/clash.py", b"")
        add_file(tar, "dup-1.0/clash.py/inner.py", b"")
    result = extract_archive(path, tmp_path / "out")
    assert (result.tree / "mod.py").read_text() == "second = 2\n"
    assert result.skipped == {"duplicate entry (last one kept)": 1, "path conflict": 1}
    assert result.files == 2
    assert (result.tree / "clash.py").is_file()


def test_non_utf8_names_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "enc-1.0.tar.gz"
    with tarfile.open(
        path, "w:gz", encoding="utf-8", errors="surrogateescape", format=tarfile.GNU_FORMAT
    ) as tar:
        add_file(tar, "enc-1.0/ok.py")
        add_file(tar, "enc-1.0/bad\udcff.py")
    result = extract_archive(path, tmp_path / "out")
    assert result.skipped == {"name not UTF-8": 1}
    assert listing(result.tree) == {"ok.py"}

    # A zip whose name bytes are not UTF-8 and carry no UTF-8 flag.
    raw = make_zip(tmp_path / "enc.zip", {"enc-1.0/ok.py": b"", "enc-1.0/X.py": b""}).read_bytes()
    zpath = tmp_path / "enc-1.0.zip"
    zpath.write_bytes(raw.replace(b"enc-1.0/X.py", b"enc-1.0/\xff.py"))
    result = extract_archive(zpath, tmp_path / "out-zip")
    assert result.skipped == {"name not UTF-8": 1}
    assert listing(result.tree) == {"ok.py"}


def test_no_strip_without_a_single_top_folder(tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "flat-1.0.tar.gz", {"PKG-INFO": b"Name: flat\n", "flat/__init__.py": b""})
    result = extract_archive(archive, tmp_path / "out")
    assert result.stripped is None
    assert listing(result.tree) == {"PKG-INFO", "flat/__init__.py"}


def test_manifest_holds_info_and_bad_manifests_read_as_absent(tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "m-1.0.tar.gz", {"m-1.0/m.py": b""})
    result = extract_archive(archive, tmp_path / "out", info={"sha256": "abc", "version": "1.0"})
    data = json.loads((tmp_path / "out" / MANIFEST).read_text())
    assert data["info"] == {"sha256": "abc", "version": "1.0"}
    assert read_extraction(tmp_path / "out") == result
    (tmp_path / "out" / MANIFEST).write_text(json.dumps({**data, "format": 999}))
    assert read_extraction(tmp_path / "out") is None
    assert read_extraction(tmp_path / "nowhere") is None


def test_existing_destination_is_reused(tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "r-1.0.tar.gz", {"r-1.0/r.py": b""})
    first = extract_archive(archive, tmp_path / "out")
    second = extract_archive(archive, tmp_path / "out")  # as if another process finished first
    assert second == first
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_nameless_deep_and_overlong_entries_are_skipped(tmp_path: Path) -> None:
    # Found by fuzzing: a zip entry without a name made zipfile itself fail on it.
    path = tmp_path / "odd-1.0.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("odd-1.0/ok.py", b"")
        archive.writestr(zipfile.ZipInfo("odd-1.0/placeholder"), b"x")
    path.write_bytes(path.read_bytes().replace(b"odd-1.0/placeholder", b"\0" * len("odd-1.0/placeholder")))
    result = extract_archive(path, tmp_path / "out")
    assert listing(result.tree) == {"ok.py"}
    # Entries deeper than any real package, or with a name no file system takes, are skipped.
    deep = "/".join(["d"] * 100)
    archive = make_tar(
        tmp_path / "deep-1.0.tar.gz",
        {"deep-1.0/ok.py": b"", f"deep-1.0/{deep}/x.py": b"", f"deep-1.0/{'n' * 300}.py": b""},
    )
    result = extract_archive(archive, tmp_path / "out-deep")
    assert result.skipped == {"name the file system refuses": 1, "path too deep": 1}
    assert listing(result.tree) == {"ok.py"}


def test_damaged_archives_are_clean_errors_and_leave_nothing(tmp_path: Path) -> None:
    good = make_zip(tmp_path / "good.zip", {f"z-1.0/m{i}.py": b"x = 1\n" * 50 for i in range(5)}).read_bytes()
    for at in range(0, len(good), max(1, len(good) // 40)):
        damaged = bytearray(good)
        damaged[at : at + 8] = b"\xff" * len(damaged[at : at + 8])
        path = tmp_path / "z-1.0.zip"
        path.write_bytes(bytes(damaged))
        try:
            extract_archive(path, tmp_path / "out")
        except SourceError as error:
            assert "\n" not in str(error)
            assert_nothing_left(tmp_path, tmp_path / "out")
        else:
            shutil.rmtree(tmp_path / "out")


def test_real_decompression_bombs_are_refused_early(tmp_path: Path) -> None:
    # 64 MiB of zeros compress to about 64 KiB: refused once the (configurable) limit is passed,
    # without inflating the rest; the same for bulk that is never written, but must be walked past.
    zeros = b"\0" * (64 * 1024 * 1024)
    bomb = make_tar(tmp_path / "bomb-1.0.tar.gz", {"bomb-1.0/bomb/__init__.py": zeros})
    assert bomb.stat().st_size < 1024 * 1024
    with pytest.raises(SourceError, match="more than 1048576 bytes to extract; refused"):
        extract_archive(bomb, tmp_path / "out", limits=ExtractLimits(max_bytes=1024 * 1024))
    assert_nothing_left(tmp_path, tmp_path / "out")
    bulk = make_tar(
        tmp_path / "bulk-1.0.tar.gz", {"bulk-1.0/data.bin": zeros, "bulk-1.0/bulk/__init__.py": b""}
    )
    with pytest.raises(SourceError, match="holds more than 1048576 bytes; refused"):
        extract_archive(bulk, tmp_path / "out", limits=ExtractLimits(max_scanned_bytes=1024 * 1024))
    zbomb = tmp_path / "zbomb-1.0-py3-none-any.whl"
    with zipfile.ZipFile(zbomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("zbomb/__init__.py", zeros)
    assert zbomb.stat().st_size < 1024 * 1024
    with pytest.raises(SourceError, match="bytes to extract; refused"):
        extract_archive(zbomb, tmp_path / "out", limits=ExtractLimits(max_bytes=1024 * 1024))
    assert_nothing_left(tmp_path, tmp_path / "out")


@pytest.mark.parametrize(
    ("path", "dotted"),
    [
        ("scipy/linalg/_decomp_update.pyx.in", "scipy.linalg._decomp_update"),
        ("pkg/_speed.pyx", "pkg._speed"),
        ("pkg/_speed.pxd", None),
        ("pkg/my-ext.pyx", None),
        ("pkg/sub dir/_x.pyx", None),
    ],
)
def test_cython_module_name(path: str, dotted: str | None) -> None:
    assert cython_module_name(path) == dotted
