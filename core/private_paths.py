"""Local directories and files that only this user (or its group, where asked) can reach:
where the engine keeps what must not be read or written by others (subtask host
sockets, exchange files, and a job's local storage: its state, checkpoints, savepoints,
status and metrics, which hold or quote records).

A job's storage is made with explicit modes whatever the umask (which is left alone: it
is the process's, and user code's): directories 0700 and files 0600, or 0770 and 0660
where the job's executors run as other users of one group (``set_group_access``, from
``state.checkpoints.group-access``; each process that writes state installs it).

A directory under a shared place such as ``/tmp`` could have been made by another user
before the job runs, to receive its records or to hand it data that it would unpickle.
``private_directory`` makes the directory, or checks the one it finds: a directory (not
a link) owned by this user, which it then closes to others (mode 0700)."""
import os
import stat

__all__ = ["private_directory", "check_owned", "open_private", "make_directories",
           "make_private", "set_group_access", "GROUP_ACCESS_OPTION"]

GROUP_ACCESS_OPTION = "state.checkpoints.group-access"
"""The configuration key of ``set_group_access`` (default false)."""

_modes = (0o700, 0o600)  # (directories, files) of a job's storage; see set_group_access


def set_group_access(enabled: bool) -> None:
    """Makes the directories and files of a job's storage that this process creates
    (``make_directories``, ``open_private``, ``make_private``) 0770/0660, open to their
    group, instead of 0700/0600."""
    global _modes
    _modes = (0o770, 0o660) if enabled else (0o700, 0o600)


def _widen(path_or_fd, mode: int) -> None:
    """Gives a just-created directory or file the group's bits of ``mode`` that the umask
    took (it never takes the owner's: that would break any program)."""
    if mode & 0o070:
        os.chmod(path_or_fd, mode)


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


def check_owned(path: str, what: str, group_may_write: bool = False,
                group_hint: str = "") -> None:
    """Raises PermissionError naming ``path`` (``what`` it is) if it exists and is not
    this user's, or if others can write to it (the group too, unless
    ``group_may_write``: ``group_hint`` says how to allow it); links are followed, so a
    link counts as what it points to."""
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
    allow = f", or {group_hint}" if group_hint and not stat.S_IMODE(info.st_mode) & 0o002 \
        and info.st_uid == os.getuid() else ""
    raise PermissionError(
        f"{what} {path} is not this user's own (uid {os.getuid()}): it is {why}, so someone "
        "else could have put files there that the job would trust. Use a directory of your "
        f"own, or remove write access for others (chmod go-w){allow}.")


def open_private(path: str, mode: str = "w"):
    """``open(path, mode)`` (``mode`` "w" or "a", "b" for bytes), a file that is created
    readable and writable by this user only (and its group: ``set_group_access``); an
    existing file keeps its mode."""
    flags = os.O_WRONLY | (os.O_APPEND if mode[0] == "a" else os.O_TRUNC)
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, _modes[1])
    except FileExistsError:
        fd = os.open(path, flags)
    else:
        _widen(fd, _modes[1])
    return open(fd, mode, encoding=None if "b" in mode else "utf-8")


def make_directories(path: str) -> None:
    """Creates the local directory ``path`` and its missing parents, each readable by this
    user only (and its group: ``set_group_access``); existing ones are left as they are."""
    if os.path.isdir(path):
        return
    parent = os.path.dirname(os.path.abspath(path))
    if parent != os.path.abspath(path):
        make_directories(parent)
    try:
        os.mkdir(path, _modes[0])
    except FileExistsError:
        if not os.path.isdir(path):
            raise
        return  # (made meanwhile by another process)
    _widen(path, _modes[0])


def make_private(path: str) -> None:
    """Gives this user's file ``path``, made by a library with the umask's modes, the mode
    of a job's files (0600, or 0660: ``set_group_access``)."""
    os.chmod(path, _modes[1])
