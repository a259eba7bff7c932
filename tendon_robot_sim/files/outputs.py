# Copyright 2026 tendon_robot_sim maintainers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
"""
Write outputs so that no link planted in a shared folder can send them elsewhere.

Commands run as root on lab machines and often write into a shared folder (``/tmp``): a
link planted there under an output's name (``plot.png -> /etc/passwd``) made a command
overwrite the file it pointed at. Every file the package writes goes through this module:

* a finished file (:func:`open_output`, :func:`write_output`, :func:`write_new_output`,
  :func:`save_figure`, :func:`edit_output`) is
  written into a new temporary file beside its target, created exclusively (never through
  a link), and renamed onto the target once complete: a link at the target is replaced,
  never followed, and nobody (nor a crash) sees half a file;
* a file that grows while a command runs (a log) is created the same way and renamed into
  place at once (:func:`open_growing`);
* a link on the way to an output (the output folder, or a folder above it) is followed only
  if it belongs to the user who runs the command or to the owner of the folder that holds
  it (:func:`check_links`): the rule of Linux's ``fs.protected_symlinks`` for shared sticky
  folders, applied everywhere. A link someone else planted is refused with
  :class:`UnsafeOutputError`, before anything is written.

A file that replaces a regular file keeps that file's permissions (and, run as root, its
owner): a private file stays private. Imports nothing else of the package, so every layer
can use it.
"""

from __future__ import annotations

from contextlib import contextmanager
import errno
import os
from pathlib import Path
import secrets
import shutil
import stat
from typing import IO, Iterator

# Links followed on the way to one output before giving up (the kernel's own limit).
MAX_LINKS = 40
# What a full file system answers a write: no space, the user's quota spent, a file too large
FULL_DISK = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
# The names of the temporary files beside a target: .NAME.<8 hex digits>.part
TEMPORARY_TOKEN_BYTES = 4
TEMPORARY_PATTERN = '.*.' + '?' * 2 * TEMPORARY_TOKEN_BYTES + '.part'


class UnsafeOutputError(ValueError):
    """An output path that runs through a link someone else planted; the message names it."""


def _owner(uid: int) -> str:
    try:
        import pwd
        return f'{pwd.getpwuid(uid).pw_name} (uid {uid})'
    except (ImportError, KeyError):
        return f'uid {uid}'


def check_links(path: str | Path) -> Path:
    """
    Return the real path of ``path``; UnsafeOutputError for a link nobody trusted put there.

    Walks ``path`` part by part as the kernel resolves it; a link is trusted if its owner is
    the user running this (effective uid) or the owner of the folder holding the link.
    Parts that do not exist yet end the walk: the rest is created by the writer.
    """
    real, _ = _walk(Path(path), Path.cwd(), 0)
    return real


def _walk(path: Path, base: Path, links: int) -> tuple[Path, int]:
    current = Path(path.anchor) if path.is_absolute() else base
    parts = path.parts[1:] if path.is_absolute() else path.parts
    for index, part in enumerate(parts):
        if part in ('', '.'):
            continue
        if part == '..':
            current = current.parent
            continue
        candidate = current / part
        try:
            mode = os.lstat(candidate)
        except OSError:      # missing (created later) or not reachable: the writer says which
            return candidate.joinpath(*parts[index + 1:]), links
        if not stat.S_ISLNK(mode.st_mode):
            current = candidate
            continue
        links += 1
        if links > MAX_LINKS:
            raise UnsafeOutputError(f'{path}: more than {MAX_LINKS} links on the way')
        holder = os.stat(current).st_uid
        if mode.st_uid not in (os.geteuid(), holder):
            raise UnsafeOutputError(
                f'{candidate} is a link owned by {_owner(mode.st_uid)}, neither you nor the '
                f'owner of {current}: an output is never written through it (it may point '
                'anywhere); give the real path')
        current, links = _walk(Path(os.readlink(candidate)), current, links)
    return current, links


def _temporary_beside(path: Path, access: int = os.O_WRONLY) -> tuple[int, Path]:
    """Create a new empty file beside ``path`` (exclusively, no link); (descriptor, path)."""
    check_links(path.parent)
    while True:
        name = path.parent / f'.{path.name}.{secrets.token_hex(TEMPORARY_TOKEN_BYTES)}.part'
        try:
            fd = os.open(name, access | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        _keep_mode(fd, path)
        return fd, name


def _keep_mode(fd: int, path: Path) -> None:
    """Give the new file at ``fd`` the permissions (and, for root, owner) of a file it replaces."""
    try:
        old = os.lstat(path)
    except OSError:
        return
    if not stat.S_ISREG(old.st_mode):    # a link is replaced by a file of our own
        return
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
    if os.geteuid() == 0:
        os.fchown(fd, old.st_uid, old.st_gid)


@contextmanager
def open_output(path: str | Path, mode: str = 'w', newline: str | None = None,
                encoding: str | None = 'utf-8') -> Iterator[IO]:
    """
    Open a new file beside ``path``; rename it onto ``path`` when the block ends without error.

    ``mode`` is ``'w'`` (text) or ``'wb'``. On an error the temporary file is removed and
    ``path`` is left as it was.
    """
    path = Path(path)
    fd, temporary = _temporary_beside(path)
    try:
        binary = 'b' in mode
        with os.fdopen(fd, mode, newline=None if binary else newline,
                       encoding=None if binary else encoding) as handle:
            yield handle
        os.replace(temporary, path)
    except BaseException as error:
        temporary.unlink(missing_ok=True)
        named = naming(error, path)
        if named is not error:
            raise named from None
        raise


@contextmanager
def edit_output(path: str | Path) -> Iterator[IO[bytes]]:
    """
    Open a copy of the file at ``path`` to read and change; rename it onto ``path`` as it ends.

    As :func:`open_output`, for a large file changed in a few places: the copy is made a
    buffer at a time, so the file is never held in memory whole.
    """
    path = Path(path)
    fd, temporary = _temporary_beside(path, os.O_RDWR)
    try:
        with os.fdopen(fd, 'r+b') as handle:
            with open(path, 'rb') as original:
                shutil.copyfileobj(original, handle)
            yield handle
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def is_full_disk(error: BaseException) -> bool:
    """Whether ``error`` is a write refused by a full file system (no bug of ours)."""
    return isinstance(error, OSError) and error.errno in FULL_DISK


def naming(error: BaseException, path: str | Path) -> BaseException:
    """Return ``error``; a full disk's that names no file (a write's) as one naming ``path``."""
    if is_full_disk(error) and error.filename is None:
        return OSError(error.errno, error.strerror, str(path))
    return error


def write_output(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` through :func:`open_output`."""
    with open_output(path, 'wb' if isinstance(data, bytes) else 'w') as handle:
        handle.write(data)


def write_new_output(path: str | Path, data: bytes) -> None:
    """
    Write ``data`` to ``path`` as :func:`write_output`, but only as a new file.

    FileExistsError if anything (a file, a link) is at ``path``: the complete file is linked
    into place, which never replaces what is there.
    """
    path = Path(path)
    fd, temporary = _temporary_beside(path)
    try:
        with os.fdopen(fd, 'wb') as handle:
            handle.write(data)
        os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def save_figure(fig, path: str | Path, **options) -> None:
    """``fig.savefig`` to ``path`` (format from its suffix) through :func:`open_output`."""
    path = Path(path)
    with open_output(path, 'wb') as handle:
        fig.savefig(handle, format=path.suffix.lstrip('.').lower() or 'png', **options)


def open_growing(path: str | Path, mode: str = 'w') -> IO:
    """
    Return ``path`` opened for writing as a new file (replacing a link there, not following it).

    For a file written while a command runs (a log a process writes into): it is created
    beside ``path`` and renamed into place at once, then written through its descriptor.
    """
    path = Path(path)
    fd, temporary = _temporary_beside(path)
    try:
        os.replace(temporary, path)
    except BaseException:
        os.close(fd)
        temporary.unlink(missing_ok=True)
        raise
    return os.fdopen(fd, mode, encoding=None if 'b' in mode else 'utf-8')


def remove_unfinished(folder: str | Path) -> None:
    """
    Remove from ``folder`` the temporary files of writes that never ended.

    A process killed (SIGTERM, SIGKILL, a power cut) while it wrote a file leaves its
    temporary file beside the target. For a folder only one run writes into, such as the
    parts of a resumable dataset, where they would pile up and keep the folder from being
    removed.
    """
    for leftover in Path(folder).glob(TEMPORARY_PATTERN):
        leftover.unlink(missing_ok=True)


def bag_clash(path: str | Path) -> str | None:
    """
    Say why a new bag cannot be written at ``path``: it lies inside a bag folder; else None.

    A bag folder is one recording: rosbag2's ``metadata.yaml`` beside its storage file, or,
    a recorder killed before it wrote the metadata, the storage file named after the folder
    (``NAME/NAME.mcap``; ``NAME_0.mcap`` of ``ros2 bag record``; ``.db3`` alike). A bag in it
    would be taken for one of its files, and go with it when it is moved or deleted.
    """
    path = Path(os.path.abspath(path))
    for folder in path.parents:
        storage = [folder / f'{folder.name}{tail}{suffix}' for tail in ('', '_0')
                   for suffix in ('.mcap', '.db3')]
        if _is_bag_metadata(folder / 'metadata.yaml') or any(p.is_file() for p in storage):
            return (f'{path} is inside the bag {folder}; a bag is written into a new folder '
                    'outside any other bag')
    return None


def _is_bag_metadata(path: Path) -> bool:
    """Tell whether ``path`` is a file that begins as rosbag2's metadata does."""
    try:
        with open(path, 'rb') as handle:
            return b'rosbag2_bagfile_information' in handle.read(4096)
    except OSError:     # missing, a folder, unreadable: no bag's metadata
        return False


def make_folder(path: str | Path) -> Path:
    """Create the folder ``path`` with its parents (it may exist), after :func:`check_links`."""
    path = Path(path)
    check_links(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


def make_new_folders(path: str | Path) -> list[Path]:
    """Create the folder ``path`` as :func:`make_folder`; return the ones made, deepest first."""
    path = Path(path)
    created = [folder for folder in (path, *path.parents) if not folder.exists()]
    make_folder(path)
    return created


@contextmanager
def removed_on_failure(folders: list[Path]) -> Iterator[None]:
    """
    Remove ``folders`` (deepest first, from :func:`make_new_folders`) if the block fails.

    Only while empty: a folder that holds a file stops it. A command makes its output folder
    first, so that one that cannot be made fails before the work, and a failed command leaves
    no empty folder behind.
    """
    try:
        yield
    except BaseException:
        for folder in folders:
            try:
                folder.rmdir()
            except OSError:
                break
        raise
