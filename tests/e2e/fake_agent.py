#!/usr/bin/env python3
"""An unprivileged user's fake gpubt agent socket (run_hardening.py's socket cases, issue 23 S2).

usage: fake_agent.py DIR NAME_PID MODE LOG [LIB]
Binds DIR/NAME_PID.sock (NAME_PID "self": this process's pid), writes "ready" to LOG, and for
each connection writes "connected" and, if an Attach frame comes, "attach". MODE says what it
answers: "escape" a Refused frame full of terminal escape sequences, "huge" a header claiming a
2 GiB Refused frame, "fds" a header of no frame type with 64 fds of LOG riding on it; "exit3",
"printexit", "badrecord", "flood" and "hang" Attached, the Events frames EVENTS_THEN_EXIT lists,
and exit with status 3 (each says the config's time and timecalls lines: "time 1"; "hang": two looks at a kernel spin running 3 s, as the CUDA agent sends
them while it watches launches; "finished": two FinishedLaunches records of five launches, as the
CUDA agent sends them while it times launches); "badresults" Attached, and at Detach Results of two images, the first with a
record claiming 0 bytes, the second with a printf record; "warn" a warning Log frame (with an
escape sequence) and a -v Log frame before Attached, then exits with status 3; "failfirst"
closes its first connection unanswered, then answers Attached and at Detach empty Results;
"partial" Attached, and at Detach Results of one image whose probe ran once, with one module
said and counted as untraced (an agent that could not patch it); "printlive" Attached, one
printf record, and at Detach empty Results; "silent" nothing. LIB: a file named
libgpubt_agent*.so to map first (this process then looks like one that loaded the agent)."""
import mmap
import os
import re
import socket
import struct
import sys
import time


ATTACHED, REFUSED, EVENTS, RESULTS, LOG = 2, 3, 4, 6, 7  # abi::Frame


def frame(kind, payload):
    return struct.pack("<IIQ", kind, 0, len(payload)) + payload


# gpubt_ring_record (size, commit) and abi::EventHeader (kind, index): a printf of format 0 with
# no arguments, a record claiming 0 bytes, and a GpuLaunch record (its 88-byte payload zeroed).
PRINTF_RECORD = struct.pack("<IIII", 16, 1, 1, 0)
NO_RECORD = struct.pack("<IIII", 0, 1, 1, 0)
LAUNCH_RECORD = struct.pack("<IIII", 104, 1, 11, 0) + bytes(88)


def running_record(sent_ns, launches):
    """A RunningLaunches record (runtime/abi/running_launches.h, EventKind 16) of this process:
    LAUNCHES (kernel, stream, seq, since_ns, grid, block, device, later, exact)."""
    payload = struct.pack("<QQQ", os.getpid(), sent_ns, len(launches))
    for kernel, stream, seq, since, grid, block, device, later, exact in launches:
        name = kernel.encode()
        payload += struct.pack("<QQQ3I3I6I", seq, stream, since, *grid, *block, device, later,
                               exact, 0, len(name), 0) + name  # graph_kernels 0, pad
    size = (16 + len(payload) + 7) // 8 * 8
    return (struct.pack("<IIII", size, 0, 16, 0) + payload).ljust(size, b"\0")


def finished_record(launches, lost=0):
    """A FinishedLaunches record (runtime/abi/finished_launches.h, EventKind 17) of this process:
    LAUNCHES (kernel, stream, seq, start_ns, end_ns, grid, block, device); each launch's
    launch_call (call_ns) 10 us before its start."""
    payload = struct.pack("<QQQ", os.getpid(), lost, len(launches))
    for kernel, stream, seq, start, end, grid, block, device in launches:
        name = kernel.encode()
        payload += struct.pack("<QQQQQ3I3III", seq, stream, start, end, start - 10_000, *grid,
                               *block, device, len(name)) + name
    size = (16 + len(payload) + 7) // 8 * 8
    return (struct.pack("<IIII", size, 0, 17, 0) + payload).ljust(size, b"\0")


def finished_launches():
    """vectorAdd 300, 350 and 5 us; spin 1500 us twice."""
    t = time.monotonic_ns() - 1_000_000_000
    vec = lambda seq, start, us: ("_Z9vectorAddPKfS0_Pfi", 0x10, seq, start, start + us * 1000,
                                  (4096, 1, 1), (256, 1, 1), 0)
    spin = lambda seq, start: ("_Z4spinPi", 0x20, seq, start, start + 1_500_000, (4, 1, 1),
                               (128, 1, 1), 1)
    return [finished_record([vec(1, t, 300), spin(1, t + 1000), vec(2, t + 400_000, 350)]),
            finished_record([spin(2, t + 600_000), vec(3, t + 900_000, 5)])]


def spin_looks():
    now = time.monotonic_ns()  # CLOCK_MONOTONIC, as the agent's
    spin = ("_Z4spinPi", 0x10, 3, now - 3_000_000_000, (4, 1, 1), (128, 1, 1), 0, 0, 1)
    return [running_record(now, [spin]), running_record(now + 500_000_000, [spin])]


# Modes that answer Attached, send these Events frames and exit with status 3.
EVENTS_THEN_EXIT = {
    "exit3": lambda: [],
    "printexit": lambda: [PRINTF_RECORD],
    "badrecord": lambda: [NO_RECORD, PRINTF_RECORD],
    "flood": lambda: [LAUNCH_RECORD * ((32 << 20) // len(LAUNCH_RECORD))] * 16,
    "hang": spin_looks,
    "finished": finished_launches,
}


def main():
    folder, name_pid, mode, log = sys.argv[1:5]
    if len(sys.argv) > 5:
        with open(sys.argv[5], "rb") as f:
            keep = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)  # noqa: F841 - stays mapped
    os.makedirs(folder, mode=0o700, exist_ok=True)
    pid = os.getpid() if name_pid == "self" else int(name_pid)
    path = f"{folder}/{pid}.sock"
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(4)

    def say(what):
        with open(log, "a") as f:
            f.write(what + "\n")

    say(f"ready {os.getpid()}")
    connections = 0
    while True:
        conn, _ = s.accept()
        connections += 1
        say("connected")
        conn.settimeout(5)
        try:
            head = conn.recv(16)
        except OSError:
            head = b""
        if len(head) >= 4 and struct.unpack("<I", head[:4])[0] == 1:
            say("attach")
        if len(head) == 16 and mode != "silent":
            # The whole frame is read before answering: closing with some of it unread would
            # make gpubt's send fail (EPIPE) before it reads the answer.
            left = struct.unpack("<Q", head[8:])[0]
            config = b""
            try:
                while left > 0:
                    got = conn.recv(min(left, 1 << 16))
                    if not got:
                        break
                    left -= len(got)
                    config += got[:max(0, (1 << 20) - len(config))]
            except OSError:
                pass
            for line in (b"time", b"timecalls"):  # what the agent is asked to time
                found = re.search(rb"\n" + line + rb"\t(\S+)\n", config)
                if found:
                    say(f"{line.decode()} {found.group(1).decode()}")
        if mode == "escape":
            text = b"\x1b]0;owned\x07\x1b[2J\x1b[31mred\x1b[0m \x9b6n"
            conn.sendall(frame(REFUSED, text))
        elif mode == "warn":
            conn.sendall(frame(LOG, b"WARNING: \x1b[2Jthe GPU is busy") + frame(LOG, b"a -v line") +
                         frame(ATTACHED, b"a fake that warns"))
            conn.close()
            sys.exit(3)
        elif mode in EVENTS_THEN_EXIT:
            conn.sendall(frame(ATTACHED, f"a fake in mode {mode}".encode()))
            for events in EVENTS_THEN_EXIT[mode]():
                conn.sendall(frame(EVENTS, events))
            conn.close()
            sys.exit(3)
        elif mode == "printlive":
            conn.sendall(frame(ATTACHED, b"a fake that prints once"))
            conn.sendall(frame(EVENTS, PRINTF_RECORD))
            conn.settimeout(None)
            conn.recv(16)  # Detach
            conn.sendall(frame(RESULTS, b"GPUBTRS1" + struct.pack("<QQQ", 0, 0, 0)))
        elif mode == "failfirst" and connections == 1:
            conn.close()
        elif mode == "failfirst":
            conn.sendall(frame(ATTACHED, b"a fake that failed once"))
            conn.settimeout(None)
            conn.recv(16)  # Detach
            conn.sendall(frame(RESULTS, b"GPUBTRS1" + struct.pack("<QQQ", 0, 0, 0)))
        elif mode == "partial":
            conn.sendall(frame(ATTACHED, b"a fake with an unpatched module"))
            conn.settimeout(None)
            conn.recv(16)  # Detach
            said = b"sanitizerPatchModule failed: the module was left as loaded"
            image = struct.pack("<QQQQQ", 0, 1, 1, 0, 0) + struct.pack("<Q", 0)
            results = (b"GPUBTRS1" + struct.pack("<Q", 1) + image + struct.pack("<QQ", 1, len(said)) +
                       said + struct.pack("<QQ", 0, 1))  # no kernel names, 1 untraced
            conn.sendall(frame(RESULTS, results))
        elif mode == "badresults":
            conn.sendall(frame(ATTACHED, b"a fake with broken results"))
            conn.settimeout(None)
            conn.recv(16)  # Detach

            def image(ring):  # device 0, one probe launched once, no maps, RING, no drops
                return struct.pack("<QQQQQ", 0, 1, 1, 0, len(ring)) + ring + struct.pack("<Q", 0)
            results = (b"GPUBTRS1" + struct.pack("<Q", 2) + image(NO_RECORD) +
                       image(PRINTF_RECORD) + struct.pack("<QQ", 0, 0))
            conn.sendall(frame(RESULTS, results))
        elif mode == "fds":
            marker = os.open(log, os.O_RDONLY)
            socket.send_fds(conn, [struct.pack("<IIQ", 99, 0, 0)], [marker] * 64)
            os.close(marker)
        elif mode == "huge":
            conn.sendall(struct.pack("<IIQ", REFUSED, 0, (1 << 31) - 1) + b"x" * 64)
        keep_open = conn  # noqa: F841 - silent: the connection stays open, unanswered


if __name__ == "__main__":
    main()
