"""cache: compiled .vmfb files on disk, shared by every process of the user.

Key: sha256 over everything that decides the binary: the StableHLO text (which embeds the
signature, and every constant and global value the function read), the target backend and IREE
flags, and the IREE and pyjitc versions. A source edit that changes the program changes the key.

Entries are written atomically (temporary file + rename), carry a checksum that is verified on
every read (a truncated, corrupted or foreign file is deleted and recompiled), and are evicted
least-recently-used beyond a size bound. A .vmfb is executable code: the directory is created
private to the user (0700) and is used only if the user owns it and nobody else can write it.
A directory that can't be used (read-only, full, unsafe) means no disk caching, with one warning.

Location: PYJITC_CACHE_DIR, else the user cache directory (platformdirs); PYJITC_CACHE_DIR=off
or pyjitc.set_cache_dir(None) turns it off. Size: PYJITC_CACHE_MAX_MB (default 1024)."""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import threading
import warnings
from pathlib import Path

# 2: binaries made since the VM module is mended before it becomes bytecode (backend/vm_refs.py);
# entries of 1 may fail at run time, so they are not read
MAGIC = b"PYJITC-VMFB-2\n"
_OFF = ("off", "0", "none", "false", "")
_lock = threading.Lock()
_override: list = []          # set_cache_dir(): [path or None]
_disabled_reason: str | None = None
_warned = False


def set_cache_dir(path) -> None:
    """Use `path` for the disk cache from now on in this process; None turns the cache off."""
    global _disabled_reason
    _override[:] = [None if path is None else Path(path)]
    _disabled_reason = None


def cache_dir() -> Path | None:
    """The directory in use, or None when disk caching is off or unusable."""
    if _override:
        path = _override[0]
    else:
        env = os.environ.get("PYJITC_CACHE_DIR")
        if env is not None and env.strip().lower() in _OFF:
            return None
        if env:
            path = Path(env)
        else:
            import platformdirs
            path = Path(platformdirs.user_cache_dir("pyjitc")) / "vmfb"
    if path is None or _disabled_reason:
        return None
    return path if _usable(path) else None


def _usable(path: Path) -> bool:
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = path.stat()
    except OSError as e:
        return _disable(f"can't create the compile cache directory {path}: {e}")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return _disable(f"the compile cache directory {path} belongs to another user")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return _disable(f"the compile cache directory {path} is writable by other users")
    return True


def _disable(reason: str) -> bool:
    global _disabled_reason, _warned
    _disabled_reason = reason
    if not _warned:
        _warned = True
        warnings.warn(f"pyjitc: {reason}; compiling without a disk cache", RuntimeWarning, stacklevel=4)
    return False


def key_for(text: str, backend: str, flags: list[str]) -> str:
    from importlib.metadata import version

    from . import __version__
    h = hashlib.sha256()
    for part in (MAGIC.decode(), __version__, version("iree-base-compiler"), backend, *flags):
        h.update(part.encode())
        h.update(b"\0")
    h.update(text.encode())
    return h.hexdigest()


def _entry(directory: Path, key: str) -> Path:
    return directory / f"{key}.vmfb"


def get(key: str) -> bytes | None:
    directory = cache_dir()
    if directory is None:
        return None
    path = _entry(directory, key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + 32
    if len(data) < head or not data.startswith(MAGIC) or hashlib.sha256(data[head:]).digest() != data[len(MAGIC):head]:
        try:                    # truncated, corrupted or not ours: drop it, compile again
            path.unlink()
        except OSError:
            pass
        return None
    try:
        os.utime(path)          # recently used: evicted last
    except OSError:
        pass
    return data[head:]


def put(key: str, vmfb: bytes) -> None:
    directory = cache_dir()
    if directory is None:
        return
    payload = MAGIC + hashlib.sha256(vmfb).digest() + vmfb
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".vmfb")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
            os.replace(tmp, _entry(directory, key))      # atomic: readers see all or nothing
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as e:
        _disable(f"can't write to the compile cache {directory}: {e}")
        return
    evict(directory)


def max_bytes() -> int:
    try:
        return int(float(os.environ.get("PYJITC_CACHE_MAX_MB", "1024")) * 2**20)
    except ValueError:
        return 2**30


def evict(directory: Path, limit: int | None = None) -> None:
    """Delete least-recently-used entries until the directory holds at most `limit` bytes."""
    limit = max_bytes() if limit is None else limit
    with _lock:
        try:
            entries = [(p.stat().st_mtime, p.stat().st_size, p) for p in directory.glob("*.vmfb")]
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= limit:
                break
            try:
                path.unlink()
                total -= size
            except OSError:
                pass


def clear() -> None:
    directory = cache_dir()
    if directory is not None:
        evict(directory, 0)
