"""A hang named within 3 s (issue 26): tests/gpu/hang_kernel.cu's stuck_kernel (16 blocks of 128,
block 5 waits on a flag the host sets 6 s later) under `gpu:hang:*:1s`, started with gpubt (-c)
and attached to (-p, the dormant agent, attached before the hang), and (-c) as the one kernel
node of a CUDA graph replay (named with args.graph 1): gpubt names the kernel, its grid
and block, sure of it (args.exact), within 3 s of the launch (the line's arrival on gpubt's
stdout against the program's CLOCK_MONOTONIC stamp of the launch), once; the short kernels before
it, finished, are never named; the program's result is unchanged (its own check and sum)."""
import os
import re
import subprocess
import threading
import time

HANG = ('gpu:hang:*:1s { printf("HANG %s grid %d,%d,%d block %d,%d,%d age_ms %d exact %d '
        'queued %d graph %d\\n", kernel, gdim_x, gdim_y, gdim_z, bdim_x, bdim_y, bdim_z, '
        '(nsecs - launch_start) / 1000000, args.exact, args.queued, args.graph); }')
SUM = sum(2 * i for i in range(16 * 128))


def stamped_lines(stream, out):
    for line in stream:
        out.append((time.monotonic_ns(), line.rstrip('\n')))


def reading(p):
    """Threads that take P's stdout (stamped lines) and stderr: communicate() must not, or it
    takes lines from under the stamping thread."""
    lines, err = [], []
    threads = [threading.Thread(target=stamped_lines, args=(p.stdout, lines)),
               threading.Thread(target=lambda: err.append(p.stderr.read()))]
    for t in threads:
        t.start()
    return lines, err, threads


def ended(p, threads, timeout, interrupt=False):
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.send_signal(2) if interrupt else p.kill()
        p.wait(timeout=30)
    for t in threads:
        t.join()


def judge(lines, program_lines, graph=0):
    """(ok, detail) from gpubt's stamped stdout lines and the program's."""
    since = [int(m.group(1)) for _, l in program_lines
             for m in [re.match(r'hang_kernel: spinning since (\d+)', l)] if m]
    hangs = [(t, l) for t, l in lines if l.startswith('HANG ')]
    ok_line = any(l == f'hang_kernel: ok {SUM}' for _, l in program_lines)
    if not since or len(hangs) != 1:
        return False, f'launch stamp {since}, HANG lines {[l for _, l in hangs]}'
    t, line = hangs[0]
    delay = (t - since[0]) / 1e9
    m = re.match(rf'HANG (\S+) grid 16,1,1 block 128,1,1 age_ms (\d+) exact 1 queued 0 graph {graph}$',
                 line)
    good = bool(m) and 'stuck_kernel' in m.group(1) and delay <= 3.0 and ok_line
    return good, f'{line!r} {delay:.2f} s after the launch; program ok {ok_line}'


def hang_under_c(a, env, row, graph=False):
    cmd = [a.gpubt, '-e', HANG, '-c', f'{a.bin}/hang_kernel 6' + (' --graph' if graph else '')]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines, errs, threads = reading(p)
    ended(p, threads, 120)
    err = ''.join(errs)
    # -c: the program's stdout is gpubt's (both stamped as they arrive)
    ok, detail = judge(lines, lines, 1 if graph else 0)
    what = 'the stuck kernel of a CUDA graph replay' if graph else 'the stuck kernel'
    row(f'gpu:hang -c: {what} named within 3 s', ok and p.returncode == 0,
        f'{detail}; exit {p.returncode} stderr {err.strip()[-300:]!r}')


def hang_under_p(a, env, row):
    prog = subprocess.Popen([f'{a.bin}/hang_kernel', '6', '--wait'],
                            env=dict(env, CUDA_INJECTION64_PATH=a.agent), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    program_lines = []
    try:
        ready = prog.stdout.readline()
        if not ready.startswith('ready'):
            raise RuntimeError(f'hang_kernel: {ready!r} {prog.stderr.read()[-300:]!r}')
        g = subprocess.Popen([a.gpubt, '-p', str(prog.pid), '-e', HANG], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines, errs, threads = reading(g)
        deadline = time.monotonic() + 60
        while not any('Attaching' in l for _, l in lines) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # the attach itself (the agent's patching) is done after the banner
        prog.stdin.write('go\n')
        prog.stdin.flush()
        reader2 = threading.Thread(target=stamped_lines, args=(prog.stdout, program_lines))
        reader2.start()
        prog.wait(timeout=60)
        reader2.join()
        ended(g, threads, 30, interrupt=True)
        err = ''.join(errs)
        ok, detail = judge(lines, program_lines)
        row('gpu:hang -p: the stuck kernel named within 3 s', ok and prog.returncode == 0,
            f'{detail}; gpubt exit {g.returncode} stderr {err.strip()[-300:]!r}')
    except Exception as e:  # the rest of the suite still runs
        prog.kill()
        row('gpu:hang -p: the stuck kernel named within 3 s', False, repr(e)[-500:])


def hang_cases(a, row):
    env = dict(os.environ, GPUBT_AGENT_PATH=a.agent)
    hang_under_c(a, env, row)
    hang_under_c(a, env, row, graph=True)
    hang_under_p(a, env, row)
