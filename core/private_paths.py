"""Local directories and files that only this user can reach: where the engine keeps what
must not be read or written by others (subtask host sockets, exchange files, a job's
status and metrics, which may quote records).

A directory under a shared place such as ``/tmp`` could have been made by another user
before the job runs, to receive its records or to hand it data that it would unpickle.
``private_directory`` makes the directory, or checks the one it finds: a directory (not
a link) owned by this user, which it then closes to others (mode 0700)."""
import os
import stat

__all__ = ["private_directory", "check_owned", "open_private"]


def private_directory(path: str) -> str:
    """``path``, made (mode 0700) if it is missing; an existing one must be a directory of
    this user and not a symbolic link, and is closed to others if it was open. Raises
    PermissionError naming the path otherwise."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        why = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a directory"
    elif info.st_uid != os.getuid():
        why = f"owned by uid {info.st_uid}"
    else:
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.chmod(path, 0o700)  # this user's own: nobody else can swap it meanwhile
        return path
    raise PermissionError(
        f"{path} is not a private directory of this user (uid {os.getuid()}): it is {why}. "
        "Another user may have made it to read this job's records or to hand it data; "
        "remove it, or set TMPDIR to a directory of your own.")


def check_owned(path: str, what: str, group_may_write: bool = False) -> None:
    """Raises PermissionError naming ``path`` (``what`` it is) if it exists and is not
    this user's, or if others can write to it (the group too, unless
    ``group_may_write``); links are followed, so a link counts as what it points to."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    writable = 0o002 if group_may_write else 0o022
    if info.st_uid != os.getuid():
        why = f"owned by uid {info.st_uid}"
    elif stat.S_IMODE(info.st_mode) & writable:
        why = f"writable by others (mode {stat.S_IMODE(info.st_mode):o})"
    else:
        return
    raise PermissionError(
        f"{what} {path} is not this user's own (uid {os.getuid()}): it is {why}, so someone "
        "else could have put files there that the job would trust. Use a directory of your "
        "own, or remove write access for others (chmod go-w).")


def open_private(path: str, mode: str = "w"):
    """``open(path, mode)`` for text, a file that is created readable and writable by
    this user only (``mode`` "w" or "a"; an existing file keeps its mode)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode == "a" else os.O_TRUNC)
    return open(os.open(path, flags, 0o600), mode, encoding="utf-8")
