"""What every script in scripts/ that takes a user's path shares, so that the scripts keep
the promises docs/cli.md makes for mini-gpt itself:

  - an error is one line on stderr, `SCRIPT: error: MESSAGE`, never a traceback; exit 2 for
    bad usage or bad input (ScriptError's default), 1 for any other failure;
  - a quoted value in a message is cut to 200 characters (with its length) and control
    characters (C0, DEL, C1, U+2028/U+2029) are shown as `?`, so the line stays one line;
  - an input is read only when it is a regular file, and never beyond a stated limit
    (a FIFO, /dev/zero or a 50 GB file is refused, not waited on);
  - an output is written to a temporary beside it and renamed into place, and a path that
    is a symbolic link, a folder, a device or a FIFO is refused, never written through.

A script imports it as `import script_io`: Python puts the running script's own folder
first on sys.path, so this works from any working directory.
"""

import argparse
import math
import os
import signal
import stat
import sys
import tempfile

MAX_QUOTED = 200  # characters of a quoted value kept in a message


class ScriptError(Exception):
    """A refusal or failure reported as one line; status 2 (bad input) or 1 (failure)."""

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


def printable(text):
    """TEXT with every control character (C0, DEL, C1, U+2028, U+2029) and every lone
    surrogate (from undecodable bytes in a path) as '?': safe on one line of a terminal,
    in a message, and in XML text (which forbids C0 controls)."""
    return "".join("?" if (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u2028\u2029"
                           or 0xD800 <= ord(c) <= 0xDFFF) else c for c in str(text))


def quoted(value):
    """VALUE (any object; strings as they are) in double quotes, printable, cut to
    MAX_QUOTED characters with its full length after it."""
    text = printable(value)
    if len(text) > MAX_QUOTED:
        return f'"{text[:MAX_QUOTED]}..." ({len(text)} characters)'
    return f'"{text}"'


def shown(value):
    """A JSON value as compact JSON, printable and cut like quoted() (strings keep their
    own quotes, so `found "abc"` reads as a string and `found null` as null)."""
    import json
    text = printable(json.dumps(value, ensure_ascii=False, default=str))
    if len(text) > MAX_QUOTED:
        return f"{text[:MAX_QUOTED]}... ({len(text)} characters)"
    return text


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose usage errors are ScriptError (one line, exit 2) instead of a usage
    block and SystemExit."""

    def error(self, message):
        raise ScriptError(printable(message), 2)


def finite_float(text):
    """argparse type: a finite number (not nan, inf or -inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, found {quoted(text)}")
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, found {quoted(text)}")
    return value


def float_in(low, high):
    """argparse type: a finite number in [low, high]."""
    def parse(text):
        value = finite_float(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be in [{low:g}, {high:g}], found {quoted(text)}")
        return value
    return parse


def int_in(low, high):
    """argparse type: an integer in [low, high]."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, found {quoted(text)}")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be in [{low}, {high}], found {value}")
        return value
    return parse


def file_kind(mode):
    """What a non-regular file is, in the binary's words ("is a FIFO")."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def read_bytes(path, what, limit):
    """The bytes of the regular file PATH, at most LIMIT of them. ScriptError (2) naming
    PATH for anything else: missing, not a regular file, too large."""
    if path == "":
        raise ScriptError(f"{what} path is empty")
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not wait; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise ScriptError(f"{what} {quoted(path)}: cannot read: {e.strerror}")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ScriptError(f"{what} {quoted(path)} is {file_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise ScriptError(f"{what} {quoted(path)} holds {info.st_size} bytes, more than the limit of {limit}")
        chunks, total = [], 0
        while total <= limit:  # the size may have grown since fstat: never read past the limit
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise ScriptError(f"{what} {quoted(path)} holds more than the limit of {limit} bytes")
    except OSError as e:
        raise ScriptError(f"{what} {quoted(path)}: cannot read: {e.strerror}", 1)
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_text(path, what, limit):
    """read_bytes as UTF-8 text; ScriptError (2) with the byte offset of invalid UTF-8."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScriptError(f"{what} {quoted(path)}: invalid UTF-8 at byte offset {e.start}")


def check_output_path(path, what="output"):
    """ScriptError (2) unless PATH can take a new regular file: not empty, not naming a
    folder, and not an existing symbolic link, folder, FIFO or device."""
    if path == "":
        raise ScriptError(f"{what} path is empty")
    if path.endswith(os.sep):
        raise ScriptError(f"{what} {quoted(path)} names a folder, not a file")
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise ScriptError(f"cannot write {what} {quoted(path)}: {e.strerror}", 1)
    if not stat.S_ISREG(info.st_mode):
        raise ScriptError(f"{what} {quoted(path)} is {file_kind(info.st_mode)}; refusing to write there")


def write_atomically(path, data, what="output"):
    """Writes DATA (str as UTF-8, or bytes) to PATH through a temporary in the same folder
    and a rename, so that a reader sees the old file or the whole new one, and a symbolic
    link at PATH is refused rather than followed. ScriptError 2 for a refused path, 1 for
    a failed write (missing folder, full disk, no permission)."""
    check_output_path(path, what)
    if isinstance(data, str):
        data = data.encode("utf-8", "replace")  # a lone surrogate becomes '?', never an exception
    folder = os.path.dirname(path) or "."
    try:
        fd, temp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    except OSError as e:
        raise ScriptError(f"cannot write {what} {quoted(path)}: {e.strerror}", 1)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, 0o644 & ~current_umask())
        check_output_path(path, what)  # a link planted while we wrote is still refused
        os.replace(temp, path)
    except BaseException as e:
        try:
            os.unlink(temp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise ScriptError(f"cannot write {what} {quoted(path)}: {e.strerror}", 1)
        raise


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def run_main(prog, main):
    """Runs MAIN() and exits with its status; every error becomes one line
    `PROG: error: ...` (ScriptError with its status; anything unforeseen with 1). Ctrl-C
    and SIGTERM end it through an exception (130, 143), so that every `finally` and
    write_atomically's clean-up runs and no temporary is left."""
    def fail(message, status):
        try:
            sys.stderr.write(f"{prog}: error: {printable(message)}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        return status
    def terminated(signum, frame):  # SIGTERM as an exception: temporaries go on the way out
        raise ScriptError("terminated (SIGTERM)", 143)
    signal.signal(signal.SIGTERM, terminated)
    try:
        status = main() or 0
    except ScriptError as e:
        status = fail(str(e), e.status)
    except KeyboardInterrupt:
        status = fail("interrupted", 130)
    except RecursionError:
        status = fail("input nested too deep", 2)
    except MemoryError:
        status = fail("out of memory", 1)
    except OSError as e:  # every file is opened through this module, so it is stdout's (print)
        where = quoted(e.filename) if e.filename is not None else "cannot write to standard output"
        status = fail(f"{where}: {e.strerror or e}", 1)
    except Exception as e:  # a bug: still one line, with what Python said
        status = fail(f"internal error: {type(e).__name__}: {e}"[:400], 1)
    # What was printed must have reached stdout (a full disk, a closed pipe); stdout is
    # None when the script was started with it closed, and print() then wrote nothing.
    if sys.stdout is not None:
        try:
            sys.stdout.flush()
        except (OSError, ValueError) as e:
            status = status or fail(f"cannot write to standard output: {getattr(e, 'strerror', None) or e}", 1)
    # Leave without Python's own flush at exit, which would print a second complaint
    # about a closed or full stdout.
    os._exit(status)
