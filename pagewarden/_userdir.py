"""pagewarden's per-user directory: where it keeps what outlives one run (today: the network
layer's CA).

``$PAGEWARDEN_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/pagewarden``, else
``~/.config/pagewarden``. Created on first use, private (0700); nothing in it is needed
before the code that needs it creates it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["ENV_VAR", "UserDirError", "config_dir", "exclusive_lock", "private_dir"]

#: The environment variable that moves the per-user directory.
ENV_VAR = "PAGEWARDEN_CONFIG_DIR"


class UserDirError(OSError):
    """pagewarden's per-user directory (or a file in it) cannot be created or written; the
    message names the path and the variable that moves it."""


def config_dir() -> Path:
    """pagewarden's per-user configuration directory (not created here)."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "pagewarden"


def unwritable(path: Path, exc: OSError) -> UserDirError:
    """The error for a per-user path that cannot be made or written."""
    reason = exc.strerror or type(exc).__name__
    return UserDirError(
        f"pagewarden cannot write its per-user directory {path}: {reason}. "
        f"Set {ENV_VAR} to a writable directory (it moves everything pagewarden keeps per user)."
    )


def private_dir(path: Path, *, tighten: bool = True) -> Path:
    """`path` as a directory only its owner can enter: created 0700 (so are missing parents
    up to the per-user directory); an existing one is set to 0700 unless ``tighten=False``
    (a directory the user named may be shared: it is left as it is)."""
    try:
        for missing in reversed([p for p in (path, *path.parents) if not p.exists()]):
            missing.mkdir(mode=0o700, exist_ok=True)
        if tighten and path.stat().st_mode & 0o077:
            os.chmod(path, 0o700)
        if not os.access(path, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        raise unwritable(path, exc) from exc
    return path


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on the file `path` (created, 0600) across processes."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise unwritable(path.parent, exc) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
