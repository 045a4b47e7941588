"""A tiny client for this user's memdir server: find it, start it, call it about a vault. Standard library only.

Hooks run on every prompt and must answer in milliseconds, so this module imports nothing
beyond the standard library (no YAML, no models, no MCP SDK).
"""

from __future__ import annotations

import errno
# The C module, not `socket`: socket.py builds its enums (AddressFamily and the rest) from every constant at import,
# and a hook only ever connects to 127.0.0.1 (bench/results/sessions.md, "the hook process's CPU").
import _socket
import os
import sys
import time

from . import plain_json as json
from .waiting import attempts

TYPE_CHECKING = False  # a constant, not typing's: a hook process imports no typing (annotations are strings)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable

ADDRESS_FILE = "server.json"  # in the per-user folder: pid, port and token of this user's server (0600)
PROCESS_LOCK = "server.lock"  # in the per-user folder: held by the one server process of this user
START_LOCK = "server.start.lock"
INBOX = "server.inbox"  # a starting server's socket for the hook events no spool could take (server/inbox.py)
LOG_NAME = "server.log"
# A process spawned by `spawn_once` counts as starting for this long, until it holds its own lock: a server under
# load took 6.6 s of imports to get there, and every hook that came meanwhile spawned another one
# (bench/results/sessions.md, "a cold start's seconds").
STARTING_SECONDS = 30.0
VAULT_LOCK = ".memdir/server.lock"  # in each vault: held by whichever process serves it (one writer)
VAULT_HEADER = "X-Memdir-Vault"  # every request names its vault; the server opens it on the first one
IDEMPOTENCY_HEADER = "X-Memdir-Idempotency-Key"  # one per logical call, sent again on a retry (idempotency.py)


class RemoteError(Exception):
    """The server answered with an error (its type name and message come from the server)."""

    def __init__(self, kind: str, message: str, status: int) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


class Unavailable(Exception):
    """No server is running for this vault (or it did not answer in time)."""


class Refused(Unavailable):
    """No server took the connection: the one whose address was read has gone (or is going)."""


class NoAnswer(Unavailable):
    """The server took the connection and then said nothing within the timeout: busy or hung, not starting."""


def servers_folder() -> Path:
    """Where this user's memdir processes leave their addresses: `$MEMDIR_SERVERS_DIR`, else
    `$XDG_RUNTIME_DIR/memdir`, else `~/.cache/memdir/servers` (made 0700: another user never sees them)."""
    from pathlib import Path

    return Path(_servers_dir())


def _servers_dir() -> str:
    """servers_folder() as a string: a hook process reads the address file without pathlib (it imports re)."""
    explicit = os.environ.get("MEMDIR_SERVERS_DIR")
    if explicit:
        return explicit
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return os.path.join(runtime, "memdir") if runtime else os.path.join(os.path.expanduser("~"), ".cache", "memdir", "servers")


def own_folder() -> Path:
    """The per-user folder, made if missing, private (0700) and refused when another user owns it."""
    folder = servers_folder()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    stat = folder.stat()
    if stat.st_uid != os.getuid():
        raise PermissionError(f"{folder} belongs to another user; set MEMDIR_SERVERS_DIR to a folder of your own")
    if stat.st_mode & 0o077:
        folder.chmod(0o700)
    return folder


def spare_spool(vault_root: str | os.PathLike[str]) -> str:
    """Where a hook keeps an event the vault's own spool could not take (a full disk, an unwritable `.memdir`):
    this user's private folder (under `$XDG_RUNTIME_DIR`, memory on a desktop login, when set), one subfolder per
    vault by a digest of its real path. The server applies it from there as from the vault's spool. Made by the hook
    (own_folder's checks), only read by the server; a string: a hook process imports no pathlib."""
    import hashlib  # only on this path: a hook that spools in its vault never imports it

    digest = hashlib.sha256(os.path.realpath(vault_root).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return os.path.join(_servers_dir(), "spool", digest)


def log_file() -> Path:
    return servers_folder() / LOG_NAME


def log_size(path: Path) -> int:
    """How long a log is now (0 when there is none): where what a process started next writes to it begins."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def log_tail(path: Path, size: int, since: int = 0) -> list[str]:
    """The non-blank lines, stripped, of a log's last `size` bytes written after its first `since` ([] when it
    cannot be read): why a server or the embedding host gave up, for the error that says so. Every start appends
    to the same log: an earlier one's last line is not this one's reason."""
    try:
        with open(path, "rb") as log:
            end = log.seek(0, os.SEEK_END)
            log.seek(max(since if since <= end else 0, end - size))  # a log made anew since: all of it is this start's
            return [line.strip() for line in log.read().decode(errors="replace").splitlines() if line.strip()]
    except OSError:
        return []


def _why_not_served(vault_root: Path, since: int) -> str:
    """` (<reason>)`: the server log's last "cannot serve <vault>" line for this vault written after `since` (a bad
    memdir.toml, say), so a hook or tool call that gives up says why, not only where the log is; "" when none."""
    marker = f"cannot serve {vault_root}: "
    reasons = [line.split(marker, 1)[1].strip() for line in log_tail(log_file(), 16384, since) if marker in line]
    return f" ({reasons[-1]})" if reasons else ""


class ServerInfo:
    """The address file's four fields. A plain class, not a dataclass: `dataclasses` imports inspect and ast,
    about a fifth of a hook process's CPU (bench/results/sessions.md, "the hook process's CPU")."""

    __slots__ = ("pid", "port", "token", "started")

    def __init__(self, pid: int, port: int, token: str, started: float) -> None:
        self.pid, self.port, self.token, self.started = pid, port, token, started

    def _fields(self) -> tuple[int, int, str, float]:
        return self.pid, self.port, self.token, self.started

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServerInfo) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"ServerInfo(pid={self.pid}, port={self.port}, started={self.started})"  # never the token

    @classmethod
    def read(cls, folder: Path | None = None) -> "ServerInfo | None":
        """The address file, if it is this user's own and private (anything else is not trusted with a prompt)."""
        try:
            with open(os.path.join(_servers_dir() if folder is None else folder, ADDRESS_FILE), "rb") as file:
                stat = os.fstat(file.fileno())
                if stat.st_uid != os.getuid() or stat.st_mode & 0o077:
                    return None
                data = json.loads(file.read())
            return cls(int(data["pid"]), int(data["port"]), str(data["token"]), float(data["started"]))
        except (FileNotFoundError, ValueError, KeyError, TypeError, PermissionError, IsADirectoryError):
            return None


def process_alive(pid: int) -> bool:
    """Whether a process runs; a killed child its parent has not collected yet (a zombie) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = proc_fields(pid)
    if fields is None:
        return True  # no /proc (macOS): signal 0 is all we can know
    return fields[:1] not in (["Z"], ["X"])


def proc_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state, parent pid, ...); None without one. The name is
    in parentheses and may hold spaces and parentheses itself, so the fields start after the last ")"."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            stat = file.read()
    except OSError:
        return None
    return stat[stat.rfind(")") + 1:].split()


def process_age() -> float:
    """Seconds since this process started (its interpreter's start and imports included; 0 without /proc): a
    hook's budget is counted from there, not from the moment its code began to count."""
    fields = proc_fields(os.getpid())
    try:
        with open("/proc/uptime") as file:
            uptime = float(file.read().split()[0])
        return max(uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"), 0.0) if fields else 0.0
    except (OSError, ValueError, IndexError):
        return 0.0


def running() -> ServerInfo | None:
    """This user's server, if its process is alive (its address file may outlive a crash)."""
    info = ServerInfo.read()
    return info if info is not None and process_alive(info.pid) else None


def serving(vault_root: Path) -> ServerInfo | None:
    """This user's server when it has `vault_root` open: it holds the vault's lock, whose file names its pid.
    A lock held by another process (another user's server on a shared folder, a server of another
    MEMDIR_SERVERS_DIR) is not this server's: the CLI must not send it the vault's work."""
    info = running()
    path = vault_root / VAULT_LOCK
    if info is None or not lock_held(path):
        return None
    holder = _written_pid(path)
    return info if holder is None or holder == info.pid else None  # None: an older memdir wrote no pid


def _written_pid(path: Path) -> int | None:
    try:
        with open(path, "rb") as file:
            written = file.read(32).decode(errors="replace").strip()
    except OSError:
        return None
    return int(written) if written.isdigit() else None


def request(info: ServerInfo, method: str, path: str, body: Any = None, timeout: float = 30.0,
            vault: Path | None = None, key: str | None = None) -> Any:
    """One JSON request with the server's token, about `vault` when given; raises RemoteError or Unavailable.
    `key`: the call's idempotency key (the same on a retry, so the server applies a write once). `timeout` bounds
    the whole request, not each socket operation (a hook's budget held one timeout per read of the answer)."""
    payload = json.dumps(body).encode() if body is not None else b""
    named = f"{VAULT_HEADER}: {quote(str(vault))}\r\n" if vault is not None else ""
    named += f"{IDEMPOTENCY_HEADER}: {key}\r\n" if key else ""
    head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{info.port}\r\nAuthorization: Bearer {info.token}\r\n{named}"
            f"Content-Type: application/json\r\nAccept: application/json\r\nContent-Length: {len(payload)}\r\n"
            "Connection: close\r\n\r\n")
    deadline = time.monotonic() + timeout
    try:
        connection = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        try:
            connection.settimeout(timeout)
            connection.connect(("127.0.0.1", info.port))
            connection.settimeout(_left(deadline))
            connection.sendall(head.encode("latin-1") + payload)
            status, data = _read_response(connection, deadline)
        finally:
            connection.close()
    except TimeoutError as exc:
        raise NoAnswer(f"the memdir server on port {info.port} did not answer: {exc}") from None
    except ConnectionRefusedError as exc:
        raise Refused(f"the memdir server on port {info.port} did not answer: {exc}") from None
    except (OSError, ValueError) as exc:
        raise Unavailable(f"the memdir server on port {info.port} did not answer: {exc}") from None
    try:
        decoded = json.loads(data) if data else {}
    except ValueError:
        raise RemoteError("ProtocolError", f"unexpected answer from the server: {data[:200]!r}", status) from None
    if status >= 400:
        error = decoded.get("error", {}) if isinstance(decoded, dict) else {}
        raise RemoteError(error.get("type", "Error"), error.get("message", f"HTTP {status}"), status)
    return decoded


_PLAIN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/")


def quote(text: str) -> str:
    """`urllib.parse.quote(text)`'s answer (UTF-8, "/" kept) without importing urllib.parse in every hook."""
    return "".join(chr(b) if b in _PLAIN else f"%{b:02X}" for b in text.encode("utf-8"))


def _left(deadline: float | None) -> float | None:
    """The time left to `deadline`, for a socket's timeout (None: no deadline); TimeoutError when none is left."""
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("timed out")
    return left


def _read_response(connection: _socket.socket, deadline: float | None = None) -> tuple[int, bytes]:
    """Status and body of an HTTP/1.1 answer to a `Connection: close` request, all read by `deadline` (a
    time.monotonic(); None: each read bounded by the socket's own timeout).

    A hand-rolled reader because importing http.client (and the email package under it) costs
    a hook process about 40 ms on every prompt.
    """
    received = bytearray()
    while b"\r\n\r\n" not in received:
        if deadline is not None:
            connection.settimeout(_left(deadline))
        chunk = connection.recv(65536)
        if not chunk:
            raise ValueError("connection closed before the headers")
        received += chunk
    head, _, rest = bytes(received).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    body = bytearray(rest)
    length = int(headers["content-length"]) if "content-length" in headers else None
    while length is None or len(body) < length:
        if deadline is not None:
            connection.settimeout(_left(deadline))
        chunk = connection.recv(65536)
        if not chunk:
            break
        body += chunk
    if length is not None and len(body) < length:
        raise ValueError("connection closed in the middle of the answer")
    if headers.get("transfer-encoding", "").lower() == "chunked":
        return status, _unchunk(bytes(body))
    return status, bytes(body[:length] if length is not None else body)


def _unchunk(data: bytes) -> bytes:
    out, position = bytearray(), 0
    while True:
        end = data.index(b"\r\n", position)
        size = int(data[position:end].split(b";")[0], 16)
        if size == 0:
            return bytes(out)
        out += data[end + 2:end + 2 + size]
        position = end + 2 + size + 2


def hand_to_inbox(sent: bytes, timeout: float) -> bool | None:
    """Give a hook event no spool could take to the server that is starting (server/inbox.py): True when its inbox
    kept it; False when there is no inbox (not yet, or no more: the server listens) or it refused the event; None
    when it took the event and did not say so in time (it may keep it: not sent again)."""
    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        connection.settimeout(timeout)
        try:
            connection.connect(os.path.join(_servers_dir(), INBOX))
        except OSError:
            return False
        # Not kept unless the inbox read it all: a reset or a broken pipe (the inbox closed with the event still in its
        # backlog, as the server began to listen, or refused it unread), or a send not done in time. Taken for kept
        # (None), the hook sent it nowhere else and it was lost (review of session 22).
        try:
            connection.sendall(sent)
            connection.shutdown(_socket.SHUT_WR)
        except OSError:
            return False
        try:
            answer = connection.recv(16)
        except TimeoutError:
            return None
        except OSError:
            return False
        return answer == b"kept\n"
    finally:
        connection.close()


def call(vault_root: Path, op: str, args: dict[str, Any] | None = None, timeout: float = 120.0,
         key: str | None = None) -> Any:
    """Run one service operation on the vault, in this user's running server (`key`: see request)."""
    info = running()
    if info is None:
        raise Unavailable(f"no memdir server is running for {vault_root}")
    return request(info, "POST", "/api/op", {"op": op, "args": args or {}}, timeout, vault=vault_root,
                   key=key or new_key())["result"]


def new_key() -> str:
    """A fresh idempotency key for one logical call."""
    return os.urandom(16).hex()


def start_detached(vault_root: Path) -> int | None:
    """Start this user's server in the background, opening `vault_root` first, unless one is running or starting.

    A lock file makes concurrent starters (several assistant sessions opening at once) start
    exactly one server; the others see it running or starting and return.
    """
    folder = own_folder()
    return spawn_once(folder / START_LOCK, lambda: running() is not None or _process_lock_held(),
                      ["serve", "--vault", str(vault_root)], folder / LOG_NAME)


def spawn_once(start_lock: Path, present: Callable[[], bool], args: list[str], log: Path) -> int | None:
    """`memdir ARGS` started detached by exactly one of many concurrent callers: the one that takes
    `start_lock` and finds the process neither `present` nor starting. The others return None at once.
    The child's pid and start time stay in `start_lock`: until the child is `present` (it holds its own lock, after
    its imports) it is starting, and a caller that comes meanwhile spawns no second one to import all of it again.
    (Its flock is not vault.lock's: the hooks import this module, and vault/ costs them yaml and more.)"""
    import fcntl  # here and in lock_held, not at the top: a hook that finds its server running takes no lock (0.5 ms)

    fd = os.open(start_lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return None  # another process is starting it right now
            raise
        if present() or _starting(fd):
            return None
        pid = spawn_memdir(args, log)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{pid} {time.time():.3f}".encode(), 0)
        return pid
    finally:
        os.close(fd)


def _starting(start_lock_fd: int) -> bool:
    """Whether the process the last `spawn_once` started is alive and younger than STARTING_SECONDS."""
    try:
        pid, at = os.pread(start_lock_fd, 64, 0).decode().split()
        return time.time() - float(at) < STARTING_SECONDS and process_alive(int(pid))
    except (ValueError, UnicodeDecodeError):
        return False  # empty (never used) or written by an older memdir


def spawn_memdir(args: list[str], log: Path) -> int:
    """Start `memdir ARGS` in its own session, detached: no Popen object to wait on, output to `log`."""
    log_fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        return os.posix_spawn(
            sys.executable,
            [sys.executable, "-m", "mcp_server", *args],
            {**os.environ, "PYTHONUNBUFFERED": "1"},
            file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                          (os.POSIX_SPAWN_DUP2, log_fd, 1), (os.POSIX_SPAWN_DUP2, log_fd, 2)],
            setsid=True,
        )
    finally:
        os.close(log_fd)


def reap() -> None:
    """Collect servers this process started that have exited (a long-lived proxy would keep zombies)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def _process_lock_held() -> bool:
    """True while this user's server process is up (it holds server.lock), even before it is ready."""
    return lock_held(servers_folder() / PROCESS_LOCK)


def lock_held(path: Path) -> bool:
    """True while some process holds the flock on `path` (a served vault's, the server's, the embedding host's)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR)
    except (FileNotFoundError, NotADirectoryError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


OPENING = 503  # the server is opening the vault (or exiting): ask again
HEALTH_SECONDS = 5.0  # a server that is up answers /api/health (503 while it opens a vault) in milliseconds


def ensure(vault_root: Path, timeout: float = 60.0) -> ServerInfo:
    """This user's server with `vault_root` open and answering; started and waited for if needed (bounded).
    A running server that takes the connection but does not answer its health check in HEALTH_SECONDS is
    reported at once: waiting out `timeout` for a hung process only stalls the tool call (the hooks give up
    within a second too)."""
    reap()
    child: int | None = None
    logged = 0  # the server log's length when this call started a server: its reason is written after
    # Waiting for another process to bind its port or open the vault: nothing to wait on but time.
    for _ in attempts(timeout):
        info = running()
        if info is not None:
            try:
                request(info, "GET", "/api/health", timeout=HEALTH_SECONDS, vault=vault_root)
                return info
            except NoAnswer:
                if process_alive(info.pid):
                    raise NoAnswer(f"the memdir server (pid {info.pid}, port {info.port}) is running but did not "
                                   f"answer within {HEALTH_SECONDS:.0f} s: it is hung or badly overloaded; see "
                                   f"{log_file()}; end it with `kill {info.pid}` and the next call starts a new one") \
                        from None
            except Unavailable:
                pass  # still starting, or stopping: ask again below
            except RemoteError as exc:
                if exc.status != OPENING:
                    raise Unavailable(f"the memdir server cannot open {vault_root}: {exc}") from None
        elif child is None and not _process_lock_held():
            logged = log_size(log_file())
            child = start_detached(vault_root)  # one start per call: a server that cannot start must not be respawned in a loop
        elif child is not None and not process_alive(child) and not _process_lock_held():
            # The server we started has already exited (a bad memdir.toml, say): waiting out the
            # timeout would only stall the hook or the session; its reason is in the log.
            raise Unavailable(f"the memdir server for {vault_root} exited while starting{_why_not_served(vault_root, logged)}; "
                              f"see {log_file()}")
    raise Unavailable(f"the memdir server for {vault_root} did not start within {timeout:.0f} s; see {log_file()}")
