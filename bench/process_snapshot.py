"""What every process of a stalled benchmark run is doing, read from /proc: each thread's state,
the system call it waits in and the top of its kernel stack, and gdb's backtraces where gdb is
installed. bench/report writes it into a run's log before it stops the run at its time limit, so
that a hang says where it hangs; then it stops every process of the run, not only the first."""

import os
import shutil
import signal
import subprocess
import time

# x86-64 numbers of the system calls that a waiting thread is usually in.
SYSCALLS = {0: "read", 1: "write", 7: "poll", 16: "ioctl", 23: "select", 35: "nanosleep",
            44: "sendto", 45: "recvfrom", 46: "sendmsg", 47: "recvmsg", 61: "wait4",
            202: "futex", 230: "clock_nanosleep", 232: "epoll_wait", 270: "pselect6",
            271: "ppoll", 281: "epoll_pwait"}
GDB_PROCESSES = 4  # gdb takes seconds a process: only the first few of the run's own programs


def read(path):
    try:
        with open(path, errors="replace") as stream:
            return stream.read()
    except OSError:
        return ""


def stat_fields(path):
    """The fields of a /proc stat file after the command name, which may hold spaces and ')'."""
    text = read(path)
    return text[text.rfind(")") + 2:].split()


def descendants(root):
    """root and every process under it, parents before children."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = stat_fields(f"/proc/{name}/stat")
            if len(fields) > 1:
                children.setdefault(int(fields[1]), []).append(int(name))
    found, waiting = [], [root]
    while waiting:
        pid = waiting.pop(0)
        found.append(pid)
        waiting.extend(sorted(children.get(pid, [])))
    return found


def system_call(folder):
    fields = read(folder + "/syscall").split()
    if not fields:
        return "?"
    if fields[0].lstrip("-").isdigit():
        number = int(fields[0])
        return "no system call" if number < 0 else SYSCALLS.get(number, f"system call {number}")
    return fields[0]  # "running"


def kernel_stack(folder, depth=4):
    lines = read(folder + "/stack").splitlines()  # "[<0>] do_wait+0x5f/0x2f0"
    frames = [line.split("] ", 1)[-1].split("+", 1)[0] for line in lines]
    return " < ".join(frames[:depth])


def describe(pids):
    """One line per process of pids and one per thread of each."""
    lines = []
    for pid in pids:
        command = read(f"/proc/{pid}/cmdline").replace("\0", " ").strip()
        if not command:
            continue  # it ended meanwhile
        lines.append(f"process {pid}: {command[:300]}")
        try:
            tids = sorted(int(name) for name in os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue  # it ended meanwhile
        for tid in tids:
            folder = f"/proc/{pid}/task/{tid}"
            state = (stat_fields(folder + "/stat") or ["?"])[0]
            name = read(folder + "/comm").strip()
            stack = kernel_stack(folder)
            lines.append(f"  thread {tid} {name}: state {state}, in {system_call(folder)}"
                         + (f"; kernel: {stack}" if stack else ""))
    return lines


def backtraces(pids, is_ours):
    """gdb's backtrace of every thread of the first few of pids whose program is_ours picks."""
    gdb = shutil.which("gdb")
    if not gdb:
        return ["(no gdb here: no user-space backtraces)"]
    programs = {pid: read(f"/proc/{pid}/cmdline").split("\0")[0] for pid in pids}
    lines = []
    for pid in [pid for pid in pids if programs[pid] and is_ours(programs[pid])][:GDB_PROCESSES]:
        try:
            done = subprocess.run([gdb, "-p", str(pid), "-batch", "-nx", "-ex",
                                   "thread apply all bt 20"], capture_output=True, text=True,
                                  timeout=60)
            output = done.stdout
        except subprocess.TimeoutExpired:
            output = "(gdb took more than 60 s)"
        lines.append(f"gdb, process {pid}:")
        lines.extend("  " + line for line in output.splitlines()
                     if line.startswith(("#", "Thread")))
    return lines


def signal_all(pids, sig):
    for pid in reversed(pids):  # children first
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def stop_all(pids, grace=5.0):
    """SIGTERM to pids, SIGKILL to those left after grace seconds. The caller takes the list
    before: once the run's first process ends, its children belong to init, no longer under it."""
    signal_all(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while pids and time.monotonic() < deadline:
        time.sleep(0.1)
        pids = [pid for pid in pids if read(f"/proc/{pid}/cmdline")]  # a zombie has none
    signal_all(pids, signal.SIGKILL)
