#!/usr/bin/env python3
"""An unprivileged user's fake gpubt agent socket (run_hardening.py's socket cases, issue 23 S2).

usage: fake_agent.py DIR NAME_PID MODE LOG [LIB]
Binds DIR/NAME_PID.sock (NAME_PID "self": this process's pid), writes "ready" to LOG, and for
each connection writes "connected" and, if an Attach frame comes, "attach". MODE says what it
answers: "escape" a Refused frame full of terminal escape sequences, "huge" a header claiming a
2 GiB Refused frame, "exit3" Attached and then exits with status 3, "fds" a header of no frame
type with 64 fds of LOG riding on it, "system" Attached, then an Events frame holding a
system() record (which no gpu probe can make) and exits with status 3, "badrecord" Attached, an
Events frame whose record claims 0 bytes, one with a printf record of format 0, and exits with
status 3, "printexit" Attached, an Events frame with a printf record of format 0, and exits with
status 3, "flood" Attached, 16 Events frames of 32 MiB of GpuLaunch records, and exits with
status 3, "badresults" Attached, and at Detach Results of two images, the first with a ring record
claiming 0 bytes, the second with a printf record of format 0, "silent" nothing. LIB: a file named libgpubt_agent*.so to map first (this
process then looks like one that loaded the agent)."""
import mmap
import os
import socket
import struct
import sys


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
    while True:
        conn, _ = s.accept()
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
            try:
                while left > 0:
                    got = conn.recv(min(left, 1 << 16))
                    if not got:
                        break
                    left -= len(got)
            except OSError:
                pass
        if mode == "escape":
            text = b"\x1b]0;owned\x07\x1b[2J\x1b[31mred\x1b[0m \x9b6n"
            conn.sendall(struct.pack("<IIQ", 3, 0, len(text)) + text)
        elif mode == "exit3":
            text = b"a fake that will exit"
            conn.sendall(struct.pack("<IIQ", 2, 0, len(text)) + text)
            conn.close()
            sys.exit(3)
        elif mode == "system":
            text = b"a fake that asks for a command"
            conn.sendall(struct.pack("<IIQ", 2, 0, len(text)) + text)
            record = struct.pack("<IIII", 16, 1, 8, 0)  # ring header, EventKind::System, format 0
            conn.sendall(struct.pack("<IIQ", 4, 0, len(record)) + record)
            conn.close()
            sys.exit(3)
        elif mode == "printexit":
            text = b"a fake that prints and exits"
            conn.sendall(struct.pack("<IIQ", 2, 0, len(text)) + text)
            record = struct.pack("<IIII", 16, 1, 1, 0)
            conn.sendall(struct.pack("<IIQ", 4, 0, len(record)) + record)
            conn.close()
            sys.exit(3)
        elif mode == "flood":
            text = b"a fake that floods"
            conn.sendall(struct.pack("<IIQ", 2, 0, len(text)) + text)
            record = struct.pack("<IIII", 104, 1, 11, 0) + bytes(88)  # EventKind::GpuLaunch
            frame = record * ((32 << 20) // len(record))
            for _ in range(16):
                conn.sendall(struct.pack("<IIQ", 4, 0, len(frame)) + frame)
            conn.close()
            sys.exit(3)
        elif mode == "badresults":
            text = b"a fake with broken results"
            conn.sendall(struct.pack("<IIQ", 2, 0, len(text)) + text)
            conn.settimeout(None)
            conn.recv(16)  # Detach

            def image(ring):
                return (struct.pack("<QQQQ", 0, 1, 1, 0) + struct.pack("<Q", len(ring)) + ring +
                        struct.pack("<Q", 0))
            results = (b"GPUBTRS1" + struct.pack("<Q", 2) +
                       image(struct.pack("<IIII", 0, 1, 1, 0)) +
                       image(struct.pack("<IIII", 16, 1, 1, 0)) + struct.pack("<QQ", 0, 0))
            conn.sendall(struct.pack("<IIQ", 6, 0, len(results)) + results)
        elif mode == "badrecord":
            text = b"a fake with a broken record"
            conn.sendall(struct.pack("<IIQ", 2, 0, len(text)) + text)
            for record in (struct.pack("<IIII", 0, 1, 1, 0), struct.pack("<IIII", 16, 1, 1, 0)):
                conn.sendall(struct.pack("<IIQ", 4, 0, len(record)) + record)
            conn.close()
            sys.exit(3)
        elif mode == "fds":
            marker = os.open(log, os.O_RDONLY)
            socket.send_fds(conn, [struct.pack("<IIQ", 99, 0, 0)], [marker] * 64)
            os.close(marker)
        elif mode == "huge":
            conn.sendall(struct.pack("<IIQ", 3, 0, (1 << 31) - 1) + b"x" * 64)
        keep_open = conn  # noqa: F841 - silent: the connection stays open, unanswered


if __name__ == "__main__":
    main()
