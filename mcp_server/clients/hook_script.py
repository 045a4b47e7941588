"""`memdir-hook`: the hooks' own entry, a small script `memdir init` writes beside this installation's `memdir` script.

A hook is a new Python process on every prompt and every answer. Started as the `memdir` console script it paid for
Python's site initialisation before memdir's first line: the site-packages' `.pth` files, and with an editable
install (the README's) setuptools' import finder, which imports pathlib, importlib.util and fnmatch. That was 13 of
the hook process's 24 ms of CPU when it has nothing to do (bench/results/s15-lead.md). The hooks need only the
standard library and memdir's own package, so `memdir-hook` runs Python with `-S` (no site initialisation) and puts
the folder that holds the package on its path itself. Other commands keep the console script: they import
third-party packages, which only the site initialisation makes importable.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from vault import atomic

SCRIPT_NAME = "memdir-hook"
# Linux reads at most this much of a script's "#!" line (BINPRM_BUF_SIZE, 256 bytes until kernel 5.1): a longer
# interpreter path is started through /bin/sh instead, as pip does for its console scripts.
SHEBANG_LIMIT = 127
MARK = "# memdir's hooks (written by `memdir init`"  # how a `memdir-hook` memdir wrote is told from another file


def hook_invocation(console_script: str) -> list[str]:
    """The words that start a hook: this installation's `memdir-hook`, beside its `memdir` console script (a venv's
    bin/, or ~/.local/bin for a user install), written or brought up to date now; or, where it cannot be written (a
    read-only installation), `console_script hook`."""
    if not sys.executable:
        return [console_script, "hook"]
    script = script_path(console_script)
    try:
        if not runs_this_installation(script):
            if not memdirs_or_none(script):
                return [console_script, "hook"]  # a file of that name memdir did not write is not replaced
            atomic.write_state(script, this_script_text().encode("utf-8"), mode=0o755)
    except OSError:
        return [console_script, "hook"]
    return [str(script)]


def script_path(console_script: str) -> Path:
    """Where this installation's `memdir-hook` goes: beside its `memdir` console script, or its Python."""
    beside = Path(console_script) if Path(console_script).is_absolute() else Path(sys.executable).absolute()
    return beside.with_name(SCRIPT_NAME)


def starts_through_console_script(executable: str, console_script: str) -> bool:
    """Whether memdir's hook command with this executable starts the hooks as releases before `memdir-hook`
    registered them (`memdir hook ...`: twice the CPU a hook process) while this installation could register
    `memdir-hook` (its folder is writable and holds no file of that name memdir did not write: else init keeps the
    console script on purpose)."""
    script = script_path(console_script)
    return (Path(executable).name != SCRIPT_NAME and bool(sys.executable) and writable(script.parent)
            and memdirs_or_none(script))


def writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK)


def memdirs_or_none(script: Path) -> bool:
    """Whether there is no `script`, or it is a `memdir-hook` memdir wrote (for this installation or another)."""
    try:
        with script.open("rb") as file:
            return MARK.encode() in file.read(1 << 16)  # past the longest "#!" lines a path can make
    except FileNotFoundError:
        return True
    except OSError:  # a folder of that name, a file this user cannot read: not one to replace
        return False


def runs_this_installation(script: Path) -> bool:
    """Whether a `memdir-hook` script runs this Python and this memdir (an install moved or made again elsewhere
    leaves the old script naming the old one until init runs again); False when there is none."""
    try:
        return script.read_text(encoding="utf-8") == this_script_text()
    except (OSError, UnicodeDecodeError):
        return False


def this_script_text() -> str:
    """What `memdir-hook` holds for this Python and this installation of memdir."""
    return script_text(str(Path(sys.executable).absolute()), str(package_root()))


def package_root() -> Path:
    """The folder that holds the `mcp_server` package (and `vault`, `indexer`): site-packages, or the checkout of an
    editable install."""
    return Path(__file__).absolute().parents[2]


def script_text(python: str, root: str) -> str:
    shebang = f"#!{python} -S"
    if len(shebang.encode("utf-8", "surrogateescape")) > SHEBANG_LIMIT or any(c.isspace() for c in python):
        # Read by /bin/sh, which execs Python on this file; read by Python, the second line is a string.
        shebang = f"#!/bin/sh\n'''exec' {sh_quoted(python)} -S \"$0\" \"$@\"\n' '''"
    return (f"{shebang}\n"
            f"{MARK}: mcp_server/clients/hook_script.py). Python starts without its\n"
            "# site initialisation (-S), which a hook on every prompt does not need; memdir's package is found here:\n"
            "import sys\n"
            f"root = {root!r}\n"
            "sys.path.insert(0, root)\n"
            "try:\n"
            "    from mcp_server.clients.hooks import leave, main\n"
            "except ImportError as exc:  # an exit status and a sentence the assistant shows, not a traceback\n"
            "    sys.exit('memdir-hook: memdir cannot be imported from %s (%s): moved or uninstalled? Run memdir init '\n"
            "             'again from the memdir you use, or remove its hooks' % (root, exc))\n"
            "leave(main(sys.argv[1:]))  # flushed, then out without the interpreter's teardown\n")


def hook_event(words: list[str]) -> str | None:
    """The event a command's words run memdir's hook for (`memdir-hook prompt ...`, or the console script's
    `memdir hook prompt ...`), else None."""
    if not words:
        return None
    name = Path(words[0]).name
    if name == SCRIPT_NAME:
        return words[1] if len(words) > 1 else None
    if name.startswith("memdir") and len(words) > 2 and words[1] == "hook":
        return words[2]
    return None


def command_words(command: object) -> list[str]:
    """A hook command's words as a shell splits them ([] for anything else)."""
    try:
        return shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return []


def sh_quoted(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"
