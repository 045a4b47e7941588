"""A sampling profiler of a server's CPU by thread and stack, for `bench/cold_open.py --served --sample`.

On the path of a `memdir serve` process with MEMDIR_SAMPLE_OUT set, it starts a daemon thread at interpreter start
(before the imports) that every 10 ms reads each thread's CPU ticks from /proc/self/task and charges what the
thread used since the last look to the stack it is in now (`sys._current_frames`). One JSON line a charge: the
wall time, the thread's name, the CPU seconds and the stack (outermost first). py-spy is not installed here; this
needs nothing. Its own CPU is in the process's total but charged to no stack.
"""

import json
import os
import sys
import threading
import time

OUT = os.environ.get("MEMDIR_SAMPLE_OUT", "").replace("{pid}", str(os.getpid()))  # {pid}: one file a process


def _ticks(tid: int) -> int | None:
    try:
        fields = open(f"/proc/self/task/{tid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None  # the thread ended
    return int(fields[11]) + int(fields[12])  # utime + stime


def _where(frame) -> list[str]:
    stack = []
    while frame is not None:
        stack.append(f"{'/'.join(frame.f_code.co_filename.rsplit('/', 2)[-2:])}:{frame.f_code.co_name}")
        frame = frame.f_back
    return stack[::-1]


def _sample(out: str) -> None:
    me, seen, tick = threading.get_native_id(), {}, os.sysconf("SC_CLK_TCK")
    with open(out, "w") as sink:
        while True:
            time.sleep(0.01)
            threads = {t.ident: t for t in threading.enumerate()}
            now = time.time()
            for ident, frame in sys._current_frames().items():
                thread = threads.get(ident)
                if thread is None or thread.native_id in (None, me):
                    continue
                ticks = _ticks(thread.native_id)
                if ticks is None or ticks <= seen.get(thread.native_id, 0):
                    continue
                used, seen[thread.native_id] = ticks - seen.get(thread.native_id, 0), ticks
                sink.write(json.dumps({"ts": now, "th": thread.name, "cpu": used / tick, "stack": _where(frame)}) + "\n")
            sink.flush()


if OUT:
    threading.Thread(target=_sample, args=(OUT,), daemon=True, name="cpu-sampler").start()
