"""The CUDA agent's records read without gpubt: a program run under the agent with a config of our
own (live period, an inherited socket, the directives a case asks for), and the ring records of one
kind (runtime/abi/program_spec.h EventKind) taken off the socket as they come, each decoded by the
caller (its layout read from the C++ independently of gpubt's reader)."""
import os
import socket
import struct
import subprocess
import threading
import time


def read_records(sock, kind, decode, out, stop):
    buf = b''
    sock.settimeout(0.5)
    while not stop.is_set():
        try:
            chunk = sock.recv(1 << 16)
        except socket.timeout:
            continue
        if not chunk:
            break
        buf += chunk
        while len(buf) >= 16:
            size, _ = struct.unpack_from('<II', buf, 0)
            got_kind, _ = struct.unpack_from('<II', buf, 8)
            if size < 16 or len(buf) < size:
                break
            if got_kind == kind:
                out.append((time.monotonic_ns(), decode(buf[16:size])))
            buf = buf[size:]


def run_under_agent(agent, tmp, argv, directives, kind, decode, timeout=120):
    """(CompletedProcess, [(arrival ns, decoded record)]) of ARGV run with the agent and a config
    of DIRECTIVES ('name\\tvalue' lines) plus livefd."""
    parent, child = socket.socketpair()
    cfg = os.path.join(tmp, 'agent.cfg')
    with open(cfg, 'w') as f:
        f.write(f'livefd\t{child.fileno()}\n' + ''.join(d + '\n' for d in directives))
    got, stop = [], threading.Event()
    reader = threading.Thread(target=read_records, args=(parent, kind, decode, got, stop))
    reader.start()
    env = dict(os.environ, CUDA_INJECTION64_PATH=agent, GPUBT_AGENT_CONFIG=cfg)
    try:
        p = subprocess.run(argv, env=env, pass_fds=[child.fileno()], capture_output=True,
                           text=True, timeout=timeout)
    finally:
        child.close()
        time.sleep(0.6)
        stop.set()
        reader.join()
        parent.close()
    return p, got
