#!/usr/bin/env python3
"""gpubt attaching to a training job already running (issue 13), on a GPU machine.

Three copies of tests/gpu/ml/train_service.py (a transformer training step, trained in bursts on
command): P without the agent, D and D2 started with it (dormant). Every burst D or D2 runs is
also run by P, so their loss sequences must stay bit-identical to P's whatever gpubt did. Checks:
- dormant and after detach, D's step time is within 1% of P's (bursts interleaved, medians);
- gpubt -p D, attached only while one burst runs: GPU launches == host cuLaunchKernel* calls of
  that window, twice in a row; then gpubt killed (-9) while attached, and attached again (thread
  exits == grid arithmetic of cuLaunchKernel(Ex)): the agent had detached by itself;
- a second gpubt while one is attached is refused ('busy'); a non-root user is refused
  ('permission denied'); P (no agent) gets the message saying how to start one;
- gpubt without -p attaches to D and to D2 started after it, maps keyed by pid, each equal to
  that pid's host launch count;
- the dormant agent's memory (VmRSS of D vs P);
- a job T started in timing mode (`gpubt agent env --timing`, issue 25) beside a fresh twin:
  dormant and after detach within 1%; attached, kerneltime's probe runs in gpubt with one launch
  record per host launch, kerneltime <= 1.03x, --timeline <= 1.02x, launchlate <= 1.02x; a probe in the
  kernels refused; T's losses bit-identical to its twin's (--only-timing: this case alone).
Cost rows: every trainer's launching threads on one CPU (MAIN_CPU; --free-threads: not), gpubt
off it; each row prints per burst the launching CPU and its involuntary switches, and the steal.
usage: attach_suite.py --gpubt PATH --agent PATH"""
import argparse, concurrent.futures, os, re, signal, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
THREADS = ('(uint64)args.gridDimX * args.gridDimY * args.gridDimZ * args.blockDimX * '
           'args.blockDimY * args.blockDimZ')
LAUNCHES = 'gpu:kprobe:* /tid == 0/ { @gpu = count(); } uprobe:cuda:cuLaunchKernel* { @host = count(); }'
# cuLaunchKernelEx's grid is in its CUlaunchConfig: gridDimX..Z, blockDimX..Z, 4 bytes each.
EX_THREADS = ' * '.join(['(uint64)*(uint32 *)arg0'] +
                        [f'*(uint32 *)(arg0 + {4 * i})' for i in range(1, 6)])
THREAD_EXITS = ('gpu:kretprobe:* { @gpu = count(); } '
                f'uprobe:cuda:cuLaunchKernel {{ @host = sum({THREADS}); }} '
                f'uprobe:cuda:cuLaunchKernelEx {{ @host = sum({EX_THREADS}); }} '
                'uprobe:cuda:cuLaunchCooperativeKernel { @other = count(); }')
COUNT_ONLY = 'gpu:kprobe:* /tid == 0/ { @n = count(); }'
# Every trainer on the same CPUs: two identical processes on different cores (or NUMA nodes)
# differ by several percent in a host-bound training step.
CPUS = {2, 3, 4, 5}
# And within them, the threads that launch (main, autograd) on one CPU, the same in every
# trainer (tests/gpu/ml/main_thread.py): left to the scheduler, one trainer's ran 1.1-1.2x
# slower than its twin's for several rounds in a row (H200, 2026-11-29). None: left free.
MAIN_CPU = min(CPUS)


def off_main_cpu(cpus):
    """CPUS less MAIN_CPU: for gpubt, whose threads must not preempt a trainer's launching one."""
    return cpus - {MAIN_CPU} if MAIN_CPU is not None else cpus
PER_PID = ('gpu:kprobe:* /tid == 0/ { @gpu[pid] = count(); } '
           'uprobe:cuda:cuLaunchKernel* { @host[pid] = count(); }')
results = []


def check(name, ok, detail):
    ok = bool(ok)
    results.append(ok)
    print(f'[{"PASS" if ok else "FAIL"}] {name}: {detail}', flush=True)


class Trainer:
    """tests/gpu/ml/train_service.py (--compile: torch.compile'd), alone or run by a command
    (WRAP: e.g. gpubt's arguments before its -c); lines the wrapper prints are passed over."""
    def __init__(self, env, log, hold=False, wrap=(), compiled=False, wait=True):
        cmd = ([sys.executable, f'{HERE}/ml/train_service.py'] + (['--hold'] if hold else [])
               + (['--compile'] if compiled else []))
        self.hold = hold
        # The last burst's (train_service.py): CPU, involuntary switches, CPU us a step of the
        # launching threads and of the process.
        self.cpu = self.preempted = self.launch_us = self.process_us = None
        if MAIN_CPU is not None:
            env = dict(env, TRAIN_MAIN_CPU=str(MAIN_CPU))
        cpus = off_main_cpu(CPUS) if wrap else CPUS  # (the trainer pins its own launchers)
        self.p = subprocess.Popen(list(wrap) + ['-c', ' '.join(cmd)] if wrap else cmd,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(log, 'w'), text=True, env=env,
                                  preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        self.pid = self.p.pid
        self.log = log
        if not hold and wait:  # (not WAIT: the caller calls go(), after starting others)
            self.go()

    def line(self, prefix):
        """The next line of the trainer's that starts with PREFIX."""
        for line in self.p.stdout:
            if line.startswith(prefix):
                return line
        raise RuntimeError(f'trainer {self.pid} ended: {open(self.log).read()[-2000:]}')

    def go(self):  # (--hold) on to the model and 'ready'
        if self.hold:
            self.line('cuda')
            self.p.stdin.write('go\n')
            self.p.stdin.flush()
        self.line('ready')

    def send_burst(self, n):
        self.p.stdin.write(f'burst {n}\n')
        self.p.stdin.flush()

    def burst_result(self):
        m = re.match(r'burst \d+ ms ([0-9.]+) mean [0-9.]+ losses (\S+) cpu (\d+) preempted (\d+) '
                     r'work_us ([0-9.]+) ([0-9.]+)', self.line('burst '))
        self.cpu, self.preempted = int(m.group(3)), int(m.group(4))
        self.launch_us, self.process_us = float(m.group(5)), float(m.group(6))
        return float(m.group(1)), m.group(2).split(',')

    def burst(self, n):
        self.send_burst(n)
        return self.burst_result()

    def rss_kb(self):
        for line in open(f'/proc/{self.pid}/status'):
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
        return 0

    def quit(self):
        self.p.stdin.write('quit\n')
        self.p.stdin.flush()
        out, _ = self.p.communicate(timeout=120)
        return out  # what a wrapper printed at the end (gpubt's maps)


class Gpubt:
    """gpubt in the background until stop(); waits for its 'Attaching' line (and, with WAIT_FOR,
    for -v's 'attached to process PID' lines)."""
    def __init__(self, args, env, tmp, wait_for=()):
        self.out = open(os.path.join(tmp, f'gpubt{time.time_ns()}.out'), 'w+')
        self.err = open(os.path.join(tmp, f'gpubt{time.time_ns()}.err'), 'w+')
        cpus = off_main_cpu(os.sched_getaffinity(0))
        self.p = subprocess.Popen(args, stdout=self.out, stderr=self.err, env=env,
                                  preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        self.wait_text(lambda: 'Attaching' in self.text()[0], 120)
        for pid in wait_for:
            self.wait_text(lambda: f'attached to process {pid}:' in self.text()[1], 120)

    def text(self):
        return open(self.out.name).read(), open(self.err.name).read()

    def wait_text(self, cond, timeout):
        t = time.time()
        while not cond():
            if self.p.poll() is not None or time.time() - t > timeout:
                out, err = self.text()
                raise RuntimeError(f'gpubt: exit {self.p.poll()} {out[-1500:]!r} {err[-3000:]!r}')
            time.sleep(0.05)

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        rc = self.p.wait(timeout=120)
        out, err = self.text()
        return rc, out, err


def value(out, name):
    m = re.search(rf'^@{name}: (\d+)$', out, re.M)
    return int(m.group(1)) if m else None


def keyed(out, name):
    return {int(k): int(v) for k, v in re.findall(rf'^@{name}\[(\d+)\]: (\d+)$', out, re.M)}


class Spinner:
    """tests/gpu/persistent_kernel.cu, driven by its stdin commands."""
    def __init__(self, path, env, log):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(log, 'w'), text=True, env=env)
        self.pid, self.log = self.p.pid, log
        self.ask(None, 'ready')

    def ask(self, cmd, want, timeout=int(os.environ.get('ATTACH_ASK_TIMEOUT', 60))):
        if cmd:
            self.p.stdin.write(cmd + '\n')
            self.p.stdin.flush()
        # A program held for ever is this case's failure, not the suite's hang.
        reader = concurrent.futures.ThreadPoolExecutor(1)
        try:
            line = reader.submit(self.p.stdout.readline).result(timeout)
        except concurrent.futures.TimeoutError:
            self.p.kill()
            line = f'(no answer in {timeout} s: killed)'
        finally:
            reader.shutdown(wait=False)
        if not line.startswith(want):
            raise RuntimeError(f'persistent_kernel: {cmd!r} gave {line!r}: {open(self.log).read()[-2000:]}')
        return line.split()

    def burst(self, n):  # (launches counted so far, ms the burst took)
        words = self.ask(f'burst {n}', 'burst')
        return int(words[3]), float(words[5])


SPIN_SCRIPT = ('gpu:kprobe:* /tid == 0/ { @gpu[kernel] = count(); } '
               'uprobe:cuda:cuLaunchKernel* { @host = count(); }')


def persistent_kernel(gpubt, env, agent_env, tmp, binary):
    """A kernel that runs on while gpubt attaches and detaches: the attach must not hold the
    program's launches beyond its idle limit nor patch under the kernel; a detach while a patched
    kernel runs leaves its probes in place; the program is never harmed."""
    K = Spinner(binary, agent_env, f'{tmp}/spinner.log')
    K.ask('spin', 'spinning')
    g = subprocess.Popen([gpubt, '-p', str(K.pid), '-e', SPIN_SCRIPT], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    bursts = [K.burst(20) for _ in range(4)]  # while gpubt attaches: one of them is held
    time.sleep(3)
    bursts.append(K.burst(20))
    g.send_signal(signal.SIGINT)
    out, err = g.communicate(timeout=120)
    slowest = max(ms for _, ms in bursts)
    check('attach while a kernel runs on: nothing patched, launches held at most briefly',
          g.returncode in (0, 4, 5) and 'did not go idle' in err and bursts[-1][0] == 100 and
          slowest < 6000 and not keyed_names(out, 'gpu'),
          f'exit {g.returncode}, slowest burst {slowest:.0f} ms, ticks {bursts[-1][0]}/100, '
          f'{out.strip()[-300:]!r} {err.strip()[-500:]!r}')
    iterations = int(K.ask('stop', 'stopped')[1])
    g = Gpubt([gpubt, '-p', str(K.pid), '-e', SPIN_SCRIPT], env, tmp)
    K.burst(30)
    rc, out, err = g.stop()
    gpu = keyed_names(out, 'gpu')
    ticked = sum(v for k, v in gpu.items() if 'tick_kernel' in k)
    check('attach again once it ended: every launch traced',
          rc == 0 and iterations > 0 and ticked == 30 == value(out, 'host'),
          f'exit {rc}, spin iterations {iterations}, gpu {gpu}, host {value(out, "host")} '
          f'{err.strip()[-300:]!r}')
    # Issue 26: the maps are copied on the agent's own stream, so interval reads them while
    # spin_kernel runs, and the retired session's exit print shows the last copy.
    g = Gpubt([gpubt, '-p', str(K.pid), '-e', SPIN_SCRIPT + ' interval:ms:300 { print(@gpu); }'],
              env, tmp)
    K.ask('spin', 'spinning')  # patched: its probe runs, and it runs on past the detach
    K.burst(10)
    time.sleep(1.5)
    K.burst(10)
    time.sleep(1.5)
    rc, out, err = g.stop()
    live = [int(v) for v in re.findall(r'^@gpu\[tick_kernel[^\]]*\]: (\d+)$', out, re.M)]
    check('maps read while a kernel runs on: interval sees the ticks, the exit print the last copy',
          len(live) >= 3 and max(live[:-1]) >= 10 and live[-1] >= 20 and
          'as the agent last sent them' in err,
          f'tick counts printed {live}; {err.strip()[-400:]!r}')
    detached_busy = rc in (0, 5) and 'did not go idle' in err
    ticks, _ = K.burst(10)  # patched kernels still launch, probes and all
    iterations = int(K.ask('stop', 'stopped')[1])
    again = subprocess.run([gpubt, '-p', str(K.pid), '-e', SPIN_SCRIPT], env=env,
                           capture_output=True, text=True, timeout=120)
    K.ask('quit', '')
    K.p.wait(timeout=60)
    check('detach while a patched kernel runs: probes stay, the program goes on, no new attach',
          detached_busy and ticks == 160 and iterations > 0 and K.p.returncode == 0 and
          again.returncode != 0 and 'still running when it detached' in again.stderr,
          f'detach exit {rc} {err.strip()[-400:]!r}; ticks {ticks}/160, spin iterations '
          f'{iterations}, program exit {K.p.returncode} {open(K.log).read()[-300:]!r}; next '
          f'attach exit {again.returncode} {again.stderr.strip()[-300:]!r}')


def keyed_names(out, name):
    return {k: int(v) for k, v in re.findall(rf'^@{name}\[(.+)\]: (\d+)$', out, re.M)}


def attach_cycles(gpubt, env, tmp, D, P, both, sessions=20, seed=23, live_mode='mixed'):
    """Issue 23: attach/detach sessions in a mixed, seeded random order on one long-running trainer
    (-p or every agent process, ended by SIGINT, SIGTERM, kill -9 or the script's exit(), training
    during attach or not, host+gpu or gpu-only scripts of different map layouts, a second gpubt
    refused meanwhile). The first three are the sequence that killed the trainer (issue 23 item 1):
    -p twice, then without -p, each ended by interval exit() while training runs. A session whose
    boundaries fall between bursts must count every launch on both sides."""
    import random, threading
    rng = random.Random(seed)
    scripts = {  # name: (text, counted: @gpu and @host over the same launches)
        'host+gpu': (LAUNCHES, True),
        'per-pid': (PER_PID, True),
        'gpu scalar': ('gpu:kprobe:* /tid == 0/ { @gpu = count(); }', False),
        'gpu by kernel': ('gpu:kprobe:* /tid == 0/ { @k[kernel] = count(); }', False),
        'gpu exit hist': ('gpu:kretprobe:* /last_thread/ { @t = hist(nsecs - launch_start); }', False),
    }
    plan = [('-p', 'host+gpu', 'exit', True), ('-p', 'host+gpu', 'exit', True),
            ('all', 'per-pid', 'exit', True)]
    while len(plan) < sessions:
        mode = rng.choice(['-p', 'all'])
        script = rng.choice(list(scripts))
        if mode == 'all' and script == 'host+gpu':
            script = 'per-pid'  # system-wide host probes: counts by pid
        live = rng.random() < 0.5 if live_mode == 'mixed' else live_mode == 'always'
        plan.append((mode, script, rng.choice(['int', 'term', 'kill', 'exit']), live))
    for i, (mode, script, end, live) in enumerate(plan):
        text, counted = scripts[script]
        if end == 'exit':
            text += ' interval:s:3 { exit(); }'
        args = [gpubt] + (['-p', str(D.pid)] if mode == '-p' else ['-v']) + ['-e', text]
        name = f'cycle {i + 1}/{len(plan)} ({mode}, {script}, {end}, {"live" if live else "idle"})'
        burst = None
        if live:  # training while gpubt attaches
            burst = threading.Thread(target=both, args=(30,))
            burst.start()
        try:
            g = Gpubt(args, env, tmp, wait_for=[D.pid] if mode == 'all' else ())
        except RuntimeError as e:
            if burst:
                burst.join()
            check(name, False, f'attach failed: {e}')
            continue
        refused = None
        if mode == '-p' and rng.random() < 0.3:
            busy = subprocess.run([gpubt, '-p', str(D.pid), '-e', 'gpu:kprobe:* { @ = count(); }'],
                                  env=env, capture_output=True, text=True, timeout=120)
            refused = busy.returncode != 0 and 'busy' in busy.stderr
        if burst:
            burst.join()  # it may have ended before the attach did: train while attached too
        both(10)
        if end == 'exit':
            rc = g.p.wait(timeout=120)
            out, err = g.text()
        elif end == 'kill':
            g.p.kill()
            g.p.wait()
            rc, out, err = 0, '', ''
            time.sleep(1)  # the agent sees the socket close and detaches by itself
        else:
            g.p.send_signal(signal.SIGINT if end == 'int' else signal.SIGTERM)
            rc = g.p.wait(timeout=120)
            out, err = g.text()
        alive = D.p.poll() is None
        bad = [l for l in err.splitlines() if 'failed' in l or 'illegal' in l]
        ok = alive and rc == 0 and not bad and refused is not False
        detail = f'trainer {"alive" if alive else "DEAD"}, exit {rc}'
        if counted and end in ('int', 'term') and not live:
            by_pid = script == 'per-pid'
            gpu, host = ((keyed(out, 'gpu').get(D.pid), keyed(out, 'host').get(D.pid))
                         if by_pid else (value(out, 'gpu'), value(out, 'host')))
            ok = ok and gpu and gpu == host
            detail += f', gpu launches {gpu} == host {host}'
        elif counted and end != 'kill':
            gpu = keyed(out, 'gpu').get(D.pid) if script == 'per-pid' else value(out, 'gpu')
            ok = ok and bool(gpu)
            detail += f', gpu launches {gpu} (boundaries while training: not compared)'
        if refused is not None:
            detail += f', second gpubt refused: {refused}'
        check(name, ok, detail + (f' {bad[:3]!r}' if bad else '') +
              ('' if ok else f' {err.strip()[-600:]!r} trainer log {open(D.log).read()[-600:]!r}'))
        if not alive:
            return False
    return True


def cpu_times():
    """{pid: (command, CPU seconds so far)} of every process."""
    tick = os.sysconf('SC_CLK_TCK')
    out = {}
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            stat = open(f'/proc/{pid}/stat').read()
        except OSError:
            continue
        name, rest = stat[stat.index('(') + 1:stat.rindex(')')], stat[stat.rindex(')') + 2:].split()
        out[int(pid)] = (name, (int(rest[11]) + int(rest[12])) / tick)
    return out


def steal_ticks():
    """Each of CPUS's steal time so far (/proc/stat, clock ticks)."""
    return {int(f[0][3:]): int(f[8]) for f in (l.split() for l in open('/proc/stat'))
            if f[0][3:].isdigit() and int(f[0][3:]) in CPUS}


def steal_since(before):
    """CPUS's steal time since BEFORE (steal_ticks()), in ms per CPU."""
    tick = os.sysconf('SC_CLK_TCK')
    now = steal_ticks()
    return ', '.join(f'cpu{c} {1000 * (now[c] - before.get(c, 0)) // tick} ms' for c in sorted(now))


def busy_others(before, seconds, skip):
    """The processes besides SKIP that used over 5% of a CPU since BEFORE (cpu_times()): what
    else ran while a row was measured (its rounds swung on the H200 while the twins' did not)."""
    now = cpu_times()
    busy = [(now[p][1] - before.get(p, ('', 0))[1], p, now[p][0]) for p in now if p not in skip]
    return ', '.join(f'{name}[{pid}] {100 * t / seconds:.0f}%' for t, pid, name in
                     sorted(busy, reverse=True) if t > 0.05 * seconds) or 'none'


def cpu_work(a, p):
    """What each burst cost the CPU, A against P: the launching threads' and the process's
    CPU us a step per round and their median A/P. A wall-time ratio above 1 with the launching
    threads' ratio at 1 means A waited, not worked."""
    def per_round(work):
        return ', '.join(f'{l:.0f}/{q:.0f}' for l, q in work)

    def median_ratio(i):
        return statistics.median(x[i] / y[i] for x, y in zip(a, p) if y[i])
    return (f'CPU us a step, launching threads/process, per round: A {per_round(a)}, P '
            f'{per_round(p)}; median A/P launching {median_ratio(0):.3f}, process '
            f'{median_ratio(1):.3f}')


def paired_timing(label, A, P, rounds, steps, a_losses, p_losses, target):
    """A's step time against P's: ROUNDS pairs of bursts of STEPS steps, which of the two runs
    first alternating; checked as the median of per-round ratios <= TARGET. The detail names
    what else was busy meanwhile."""
    before, started, stolen = cpu_times(), time.time(), steal_ticks()
    a_times, p_times, where, work = [], [], {A: [], P: []}, {A: [], P: []}
    for r in range(rounds):
        for who in ((P, A) if r % 2 else (A, P)):  # P first every other round
            ms, loss = who.burst(steps)
            (a_times if who is A else p_times).append(ms)
            (a_losses if who is A else p_losses).extend(loss)
            where[who].append(f'{who.cpu}/{who.preempted}')
            work[who].append((who.launch_us, who.process_us))
    # The median of per-round ratios: each round's two bursts ran back to back, so a slow
    # stretch of the host (seen: rounds from 0.71x to 1.47x on an H100 host) cancels out.
    ratios = [x / y for x, y in zip(a_times, p_times)]
    ratio = statistics.median(ratios)
    d, p = statistics.median(a_times), statistics.median(p_times)
    check(f'{label}: step time vs no agent', ratio <= target,
          f'{ratio:.4f}x (median of per-round ratios; medians {d:.3f} vs {p:.3f} ms/step) over '
          f'{rounds} alternating bursts of {steps} steps each, each burst its median step (A/P per round: '
          f'{", ".join(f"{r:.3f}" for r in ratios)}; P ms per round: '
          f'{", ".join(f"{t:.2f}" for t in p_times)}; launching CPU/preemptions per round: A '
          f'{", ".join(where[A])}, P {", ".join(where[P])}; {cpu_work(work[A], work[P])}); '
          f'target <= {target}; load '
          f'{os.getloadavg()[0]:.1f}, stolen by the hypervisor: {steal_since(stolen)}, also '
          f'busy: {busy_others(before, time.time() - started, {A.pid, P.pid, os.getpid()})}')
    return ratio


# Issue 25: kerneltime's probe with the host's launch count beside it.
LAUNCH_LEVEL = ('gpu:kretprobe:* /last_thread/ { @gpu = count(); '
                '@us[kernel] = hist((nsecs - launch_start) / 1000); } '
                'uprobe:cuda:cuLaunchKernel* { @host = count(); }')


def timing_mode(gpubt, env, plain_env, tmp, rounds, steps):
    """A job started as `gpubt agent env --timing` says: dormant at plain speed; attached with -p,
    launch-level probes run in gpubt from CUPTI's records (one per host launch) at the cost the
    issue sets (kerneltime <= 1.03x, --timeline <= 1.02x, launchlate <= 1.02x); probes in the kernels
    refused; plain speed again after the detach; the losses those of a run without agent."""
    lines = subprocess.run([gpubt, 'agent', 'env', '--timing'], env=env, capture_output=True,
                           text=True).stdout
    exports = dict(re.findall(r'^export (\w+)=(\S+)$', lines, re.M))
    check('gpubt agent env --timing', exports.get('GPUBT_AGENT_MODE') == 'timing' and
          'CUDA_INJECTION64_PATH' in exports, f'{exports}')
    T = Trainer(dict(plain_env, **exports), f'{tmp}/T.log')
    P = Trainer(plain_env, f'{tmp}/P-timing.log')  # a fresh twin: the same losses step by step
    t_losses, p_losses = [], []
    pair = lambda label, target: paired_timing(label, T, P, rounds, steps, t_losses, p_losses,
                                               target)
    for _ in range(10):  # warm-up, as the dormant agent's
        for who, into in ((T, t_losses), (P, p_losses)):
            into.extend(who.burst(40)[1])
    pair('timing mode, dormant', 1.01)
    g = Gpubt([gpubt, '-v', '-p', str(T.pid), '-e', LAUNCH_LEVEL], env, tmp)
    for who, into in ((T, t_losses), (P, p_losses)):
        into.extend(who.burst(60)[1])
    rc, out, err = g.stop()
    gpu, host = value(out, 'gpu'), value(out, 'host')
    check('timing mode, -p: one launch record per host launch',
          rc == 0 and gpu and gpu == host and 'runs in gpubt once per finished launch' in err and
          '@us[' in out, f'exit {rc}, launch records {gpu}, host cuLaunchKernel* {host} (60 steps) '
          f'{err.strip()[-600:]!r}')
    for label, args, target in (
            ('tools/kerneltime.bt', [f'{ROOT}/tools/kerneltime.bt'], 1.03),
            # launch_call from the launch calls' CUPTI enter callbacks (their records do not
            # come in a running job; CUPTI's queued times, the fallback, cost 1.034x).
            ('tools/launchlate.bt', [f'{ROOT}/tools/launchlate.bt'], 1.02),
            ('--timeline', ['--timeline', f'{tmp}/timing.json', '-e',
                            'gpu:kretprobe:* /last_thread/ { @n = count(); }'], 1.02)):
        g = Gpubt([gpubt, '-v', '-p', str(T.pid)] + args, env, tmp, wait_for=(T.pid,))
        pair(f'timing mode, attached ({label})', target)
        rc, out, err = g.stop()
        calls = 'launch calls timed by their CUPTI enter callbacks'
        check(f'timing mode, attached ({label}): its output', rc == 0 and '@' in out and
              (label != '--timeline' or os.path.getsize(f'{tmp}/timing.json') > 1000) and
              (label != 'tools/launchlate.bt' or calls in err),
              f'exit {rc} {out[-300:]!r} {err.strip()[-300:]!r}')
    refused = subprocess.run([gpubt, '-p', str(T.pid), '-e', 'gpu:kprobe:* { @n = count(); }'],
                             env=env, capture_output=True, text=True, timeout=120)
    check('timing mode: a probe in the kernels is refused',
          refused.returncode != 0 and 'agent is in timing mode' in refused.stderr,
          f'exit {refused.returncode} {refused.stderr.strip()[-300:]!r}')
    pair('timing mode, after detach', 1.01)
    check('timing mode: loss sequence bit-identical to the run without agent',
          t_losses == p_losses and len(t_losses) > 0, f'{len(t_losses)} steps compared')
    T.quit()
    P.quit()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--gpubt', required=True)
    ap.add_argument('--agent', required=True)
    ap.add_argument('--rounds', type=int, default=25)
    ap.add_argument('--steps', type=int, default=100)
    ap.add_argument('--cycles', type=int, default=20)
    ap.add_argument('--only-cycles', action='store_true')
    ap.add_argument('--seed', type=int, default=23)
    ap.add_argument('--live', choices=['mixed', 'never', 'always'], default='mixed')
    ap.add_argument('--bin', help='the suite\'s programs (persistent_kernel); its case is skipped without')
    ap.add_argument('--only-persistent', action='store_true')
    ap.add_argument('--only-timing', action='store_true',
                    help='the timing-mode agent\'s cases alone (issue 25)')
    ap.add_argument('--timing-rounds', type=int, default=12)
    ap.add_argument('--free-threads', action='store_true',
                    help='the trainers\' launching threads left to the scheduler (no MAIN_CPU)')
    ap.add_argument('--only-dormant', action='store_true',
                    help='the dormant-agent cost check alone (a rerun of that measurement)')
    a = ap.parse_args()
    if a.free_threads:
        global MAIN_CPU
        MAIN_CPU = None
    tmp = tempfile.mkdtemp(prefix='gpubt-attach-')
    plain_env = {k: v for k, v in os.environ.items() if not k.startswith('GPUBT_')}
    # The agent as an installed gpubt finds it (lib/gpubt beside its bin/), and the way
    # `gpubt agent env` says to start a job with it.
    gpubt_env = dict(plain_env)
    env_lines = subprocess.run([a.gpubt, 'agent', 'env'], env=gpubt_env, capture_output=True,
                               text=True).stdout
    m = re.search(r'^export CUDA_INJECTION64_PATH=(\S+)$', env_lines, re.M)
    found = m.group(1) if m else None
    check('gpubt agent env names the installed agent',
          found and os.path.realpath(found) == os.path.realpath(a.agent), f'{found} (want {a.agent})')
    agent_env = dict(plain_env, CUDA_INJECTION64_PATH=a.agent)
    if a.bin and not a.only_dormant and not a.only_timing:
        try:
            persistent_kernel(a.gpubt, gpubt_env, agent_env, tmp, f'{a.bin}/persistent_kernel')
        except Exception as e:  # the rest of the suite still runs
            check('a kernel that runs on while gpubt attaches', False, repr(e)[-2500:])
            subprocess.run(['pkill', '-9', '-f', f'{a.bin}/persistent_kernel'])
    if a.only_persistent:
        print(f'attach suite: {sum(results)}/{len(results)} passed')
        return 0 if all(results) else 1
    if a.only_timing:
        timing_mode(a.gpubt, gpubt_env, plain_env, tmp, a.timing_rounds, a.steps)
        print(f'attach suite: {sum(results)}/{len(results)} passed')
        return 0 if all(results) else 1
    P = Trainer(plain_env, f'{tmp}/P.log')
    D = Trainer(agent_env, f'{tmp}/D.log')
    plain_losses, traced_losses = [], []

    def both(n):  # D's burst, mirrored by P so the loss sequences stay comparable
        d_ms, d_loss = D.burst(n)
        p_ms, p_loss = P.burst(n)
        traced_losses.extend(d_loss)
        plain_losses.extend(p_loss)
        return d_ms, p_ms

    def timing(label, target=1.01):
        return paired_timing(label, D, P, a.rounds, a.steps, traced_losses, plain_losses, target)

    # Warm-up: clocks, cuBLAS's choices, the caching allocator. With 3 bursts the first dormant
    # rounds on an H200 still read 1.14-1.17x and the check failed at 1.056x, where the same
    # measure after detach (later in the run) read 1.008x.
    for _ in range(10):
        both(40)
    dormant_rss = D.rss_kb() - P.rss_kb()
    if a.only_cycles:  # the attach/detach cycles alone (a quicker run while debugging them)
        attach_cycles(a.gpubt, gpubt_env, tmp, D, P, both, sessions=a.cycles, seed=a.seed,
                      live_mode=a.live)
        check('loss sequence bit-identical to the run without agent',
              traced_losses == plain_losses and len(traced_losses) > 0,
              f'{len(traced_losses)} steps compared')
        print(f'attach suite: {sum(results)}/{len(results)} passed')
        return 0 if all(results) else 1
    timing('dormant')
    if a.only_dormant:
        print(f'attach suite: {sum(results)}/{len(results)} passed')
        return 0 if all(results) else 1

    for attempt in (1, 2):
        g = Gpubt([a.gpubt, '-p', str(D.pid), '-e', LAUNCHES], gpubt_env, tmp)
        if attempt == 1:  # a second session meanwhile
            busy = subprocess.run([a.gpubt, '-p', str(D.pid), '-e', 'gpu:kprobe:* { @ = count(); }'],
                                  env=gpubt_env, capture_output=True, text=True, timeout=120)
            check('second gpubt while one is attached', busy.returncode != 0 and 'busy' in busy.stderr,
                  f'exit {busy.returncode}, {busy.stderr.strip()[-300:]!r}')
        d_ms, p_ms = both(60)
        rc, out, err = g.stop()
        gpu, host = value(out, 'gpu'), value(out, 'host')
        check(f'attach {attempt}: -p launches', rc == 0 and gpu and gpu == host,
              f'exit {rc}, gpu launches {gpu}, host cuLaunchKernel* {host} (60 steps; while '
              f'attached {d_ms:.3f} ms/step, {d_ms / p_ms:.3f}x the run without agent) '
              f'{err.strip()[-400:]!r}')
    # gpubt killed while attached: the agent sees its socket close and detaches by itself.
    g = Gpubt([a.gpubt, '-p', str(D.pid), '-e', LAUNCHES], gpubt_env, tmp)
    both(5)
    g.p.kill()
    g.p.wait()
    time.sleep(1)
    g = Gpubt([a.gpubt, '-p', str(D.pid), '-e', THREAD_EXITS], gpubt_env, tmp)
    d_ms, p_ms = both(20)
    rc, out, err = g.stop()
    gpu, host, other = value(out, 'gpu'), value(out, 'host'), value(out, 'other')
    # While attached, against the same script under -c (train_transformer.py --bench, ratio of
    # its step time to a plain run's, run after run).
    g = Gpubt([a.gpubt, '-p', str(D.pid), '-e', COUNT_ONLY], gpubt_env, tmp)
    attached = timing(f'attached ({COUNT_ONLY})', 1.10)
    g.stop()
    bench = [sys.executable, f'{HERE}/ml/train_transformer.py', '--steps', '1', '--bench']
    step = lambda out: float(re.search(r'^step_ms ([0-9.]+)$', out, re.M).group(1))
    c_ratios = []
    for _ in range(3):
        plain = subprocess.run(bench, env=plain_env, capture_output=True, text=True, timeout=300,
                               preexec_fn=lambda: os.sched_setaffinity(0, CPUS))
        traced = subprocess.run([a.gpubt, '-e', COUNT_ONLY, '-c', ' '.join(bench)], env=gpubt_env,
                                capture_output=True, text=True, timeout=300,
                                preexec_fn=lambda: os.sched_setaffinity(0, CPUS))
        c_ratios.append(step(traced.stdout + traced.stderr) / step(plain.stdout))
    c_med = statistics.median(c_ratios)
    check('attached costs what -c costs', attached <= c_med * 1.05,
          f'attached {attached:.3f}x, under -c {c_med:.3f}x (runs {", ".join(f"{r:.3f}" for r in c_ratios)})')
    check('attach 3: -p thread exits', rc == 0 and gpu and gpu == host and not other,
          f'exit {rc}, gpu thread exits {gpu}, host grid arithmetic {host}, other launches '
          f'{other}; {d_ms:.3f} ms/step attached vs {p_ms:.3f} plain {err.strip()[-400:]!r}')
    timing('after detach')

    # gpubt where user nobody may run it (the checkout may be in root's home).
    shared = tempfile.mkdtemp(prefix='gpubt-nobody-')
    os.chmod(shared, 0o755)
    subprocess.run(['cp', '-r', os.path.dirname(os.path.abspath(a.gpubt)), f'{shared}/g'], check=True)
    subprocess.run(['chmod', '-R', 'a+rX', shared], check=True)
    nobody_env = dict(gpubt_env, LD_LIBRARY_PATH=f'{shared}/g/lib')
    nobody = subprocess.run(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups',
                             f'{shared}/g/{os.path.basename(a.gpubt)}', '-p', str(D.pid), '-e',
                             'gpu:kprobe:* { @ = count(); }'],
                            env=nobody_env, capture_output=True, text=True, timeout=120)
    check('non-root user attaching to root\'s process', nobody.returncode != 0 and
          'permission denied' in nobody.stderr, f'exit {nobody.returncode}, {nobody.stderr.strip()!r}')
    no_agent = subprocess.run([a.gpubt, '-p', str(P.pid), '-e', 'gpu:kprobe:* { @ = count(); }'],
                              env=gpubt_env, capture_output=True, text=True, timeout=120)
    check('process without the agent', no_agent.returncode != 0 and
          'gpubt agent env' in no_agent.stderr, f'exit {no_agent.returncode}, {no_agent.stderr.strip()!r}')

    # System-wide: D now, D2 started while gpubt runs.
    g = Gpubt([a.gpubt, '-v', '-e', PER_PID], gpubt_env, tmp, wait_for=[D.pid])
    # D2 is held with CUDA up and nothing launched until gpubt has attached to it: then every
    # launch of its life is counted on both sides.
    D2 = Trainer(agent_env, f'{tmp}/D2.log', hold=True)
    g.wait_text(lambda: f'attached to process {D2.pid}:' in g.text()[1], 120)
    D2.go()
    _, d_loss = D.burst(10)
    D2.burst(10)
    rc, out, err = g.stop()
    _, p_loss = P.burst(10)  # D's steps, mirrored
    traced_losses.extend(d_loss)
    plain_losses.extend(p_loss)
    gpu, host = keyed(out, 'gpu'), keyed(out, 'host')
    ok = rc == 0 and all(gpu.get(p) and gpu.get(p) == host.get(p) for p in (D.pid, D2.pid))
    check('no -p: two trainers, one started after gpubt', ok,
          f'exit {rc}, gpu launches by pid {gpu}, host by pid {host} {err.strip()[-300:]!r}')
    D2.quit()
    attach_cycles(a.gpubt, gpubt_env, tmp, D, P, both, sessions=a.cycles)
    check('loss sequence bit-identical to the run without agent',
          traced_losses == plain_losses and len(traced_losses) > 0,
          f'{len(traced_losses)} steps compared')
    check('dormant agent memory', dormant_rss < 64 * 1024,
          f'VmRSS of D minus P after warm-up: {dormant_rss / 1024:.1f} MiB')
    D.quit()
    P.quit()
    timing_mode(a.gpubt, gpubt_env, plain_env, tmp, a.timing_rounds, a.steps)
    print(f'attach suite: {sum(results)}/{len(results)} passed')
    return 0 if all(results) else 1


if __name__ == '__main__':
    sys.exit(main())
