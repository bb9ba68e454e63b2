"""A hang named within 3 s (issue 26): tests/gpu/hang_kernel.cu's stuck_kernel (16 blocks of 128,
block 5 waits on a flag the host sets 6 s later) under `gpu:hang:*:1s`, started with gpubt (-c)
and attached to (-p, the dormant agent, attached before the hang), and (-c) as the one kernel
node of a CUDA graph replay (named with args.graph 1): gpubt names the kernel, its grid
and block, sure of it (args.exact), within 3 s of the launch (the line's arrival on gpubt's
stdout against the program's CLOCK_MONOTONIC stamp of the launch), once; the short kernels before
it, finished, are never named; the program's result is unchanged (its own check and sum).
tools/gpustuck.bt (gpu:hang:* at 2 s, the block maps read while the kernel spins), -c and -p:
the same kernel and grid, and exactly one block still running, 5,0,0 with its SM, within 3 s."""
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

    def take_err():
        for line in iter(p.stderr.readline, ''):
            err.append(line)

    threads = [threading.Thread(target=stamped_lines, args=(p.stdout, lines)),
               threading.Thread(target=take_err)]
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


def launch_stamps(program_lines):
    """The program's CLOCK_MONOTONIC stamps of the hang's launch, and whether it printed its ok
    line."""
    since = [int(m.group(1)) for _, l in program_lines
             for m in [re.match(r'hang_kernel: spinning since (\d+)', l)] if m]
    return since, any(l == f'hang_kernel: ok {SUM}' for _, l in program_lines)


def judge_hang(lines, program_lines, graph=0):
    """(ok, detail) from the HANG one-liner's stamped stdout lines and the program's."""
    since, ok_line = launch_stamps(program_lines)
    hangs = [(t, l) for t, l in lines if l.startswith('HANG ')]
    if not since or len(hangs) != 1:
        return False, f'launch stamp {since}, HANG lines {[l for _, l in hangs]}'
    t, line = hangs[0]
    delay = (t - since[0]) / 1e9
    m = re.match(rf'HANG (\S+) grid 16,1,1 block 128,1,1 age_ms (\d+) exact 1 queued 0 graph {graph}$',
                 line)
    good = bool(m) and 'stuck_kernel' in m.group(1) and delay <= 3.0 and ok_line
    return good, f'{line!r} {delay:.2f} s after the launch; program ok {ok_line}'


def judge_stuck(lines, program_lines):
    """(ok, detail) from tools/gpustuck.bt's stamped stdout lines and the program's: one HUNG?
    line for stuck_kernel's grid and, by the last of them, within 3 s of the launch, exactly one
    running block, 5,0,0, with its SM."""
    since, ok_line = launch_stamps(program_lines)
    hung = [(t, l) for t, l in lines if l.startswith('HUNG? ')]
    blocks = [(t, l) for t, l in lines if l.startswith('  block ')]
    if not since or len(hung) != 1 or not blocks:
        return False, f'launch stamp {since}, HUNG? lines {[l for _, l in hung]}, blocks {blocks}'
    line = hung[0][1]
    delay = (max(t for t, _ in hung + blocks) - since[0]) / 1e9
    m = re.match(r'HUNG\? pid \d+ kernel (\S+) grid 16x1x1 block 128x1x1: running \d+\.\d s; '
                 r'blocks running:$', line)
    good = (bool(m) and 'stuck_kernel' in m.group(1) and len(blocks) == 1 and
            re.fullmatch(r'  block 5,0,0 on SM \d+', blocks[0][1]) is not None and
            delay <= 3.0 and ok_line)
    return good, (f'{line!r} blocks {[l for _, l in blocks]} {delay:.2f} s after the launch; '
                  f'program ok {ok_line}')


def under_c(a, env, row, name, script, judge, graph=False):
    """hang_kernel under gpubt -c with SCRIPT (gpubt's arguments after -c's), judged by JUDGE."""
    cmd = [a.gpubt, '-c', f'{a.bin}/hang_kernel 6' + (' --graph' if graph else ''), *script]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines, errs, threads = reading(p)
    ended(p, threads, 120)
    err = ''.join(errs)
    # -c: the program's stdout is gpubt's (both stamped as they arrive)
    ok, detail = judge(lines, lines)
    row(name, ok and p.returncode == 0,
        f'{detail}; exit {p.returncode} stderr {err.strip()[-300:]!r}')


def under_p(a, env, row, name, script, judge):
    """hang_kernel with the dormant agent, gpubt -p attached with SCRIPT before the hang."""
    prog = subprocess.Popen([f'{a.bin}/hang_kernel', '6', '--wait'],
                            env=dict(env, CUDA_INJECTION64_PATH=a.agent), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    program_lines = []
    try:
        ready = prog.stdout.readline()
        if not ready.startswith('ready'):
            raise RuntimeError(f'hang_kernel: {ready!r} {prog.stderr.read()[-300:]!r}')
        # -v: gpubt says 'attached to' when the agent has answered, its patching done (it waits
        # up to 2 s for a launch to patch at, then patches the idle GPU: attach_session.cpp
        # kWaitForLaunch) and its live copier and launch watch started. Only then the hang: a
        # sleep after the banner raced that (H200, 2026-11-28: 'go' inside the 2 s, no blocks).
        g = subprocess.Popen([a.gpubt, '-v', '-p', str(prog.pid), *script], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines, errs, threads = reading(g)
        deadline = time.monotonic() + 60
        while (not any(l.startswith('gpubt: attached to') for l in list(errs)) and
               g.poll() is None and time.monotonic() < deadline):
            time.sleep(0.1)
        prog.stdin.write('go\n')
        prog.stdin.flush()
        reader2 = threading.Thread(target=stamped_lines, args=(prog.stdout, program_lines))
        reader2.start()
        prog.wait(timeout=60)
        reader2.join()
        ended(g, threads, 30, interrupt=True)
        err = ''.join(errs)
        ok, detail = judge(lines, program_lines)
        row(name, ok and prog.returncode == 0,
            f'{detail}; gpubt exit {g.returncode} stderr {err.strip()[-300:]!r}')
    except Exception as e:  # the rest of the suite still runs
        prog.kill()
        row(name, False, repr(e)[-500:])


def hang_cases(a, row):
    env = dict(os.environ, GPUBT_AGENT_PATH=a.agent)
    one_liner = ['-e', HANG]
    under_c(a, env, row, 'gpu:hang -c: the stuck kernel named within 3 s', one_liner, judge_hang)
    under_c(a, env, row, 'gpu:hang -c: the stuck kernel of a CUDA graph replay named within 3 s',
            one_liner, lambda lines, program: judge_hang(lines, program, graph=1), graph=True)
    under_p(a, env, row, 'gpu:hang -p: the stuck kernel named within 3 s', one_liner, judge_hang)
    # The blocks (tools/gpustuck.bt): under -c the agent's own copy kernel (prepared at the
    # context's creation) reads the block maps while stuck_kernel spins; under -p the attach's.
    stuck = [os.path.join(a.src, 'tools', 'gpustuck.bt')]
    under_c(a, env, row, 'tools/gpustuck.bt -c: the stuck kernel and its one running block '
            'named within 3 s', stuck, judge_stuck)
    under_p(a, env, row, 'tools/gpustuck.bt -p: the stuck kernel and its one running block '
            'named within 3 s', stuck, judge_stuck)
