#!/usr/bin/env python3
"""What gpubt adds to a kernel's launch latency (host launch call -> its first thread on the
GPU), by what the script asks for. tests/gpu/launch_queue measures every launch itself (its own
CLOCK_MONOTONIC before the call, %globaltimer in the kernel, the clocks related by pingpong), so
the numbers are the same program's truth under each configuration, not gpubt's own report.
Run by scripts/gpu-e2e.sh --latency-bench, or: launch_latency.py --bin B --gpubt G --agent A."""
import argparse, os, re, statistics, subprocess

ROUNDS, SPIN_US = 40, 2000
LAUNCHLATE_EXACT = ('uprobe:cuda:cuLaunchKernel* { @launch_ns = nsecs; } '
                    'gpu:kprobe:tiny* /tid == 0/ < printf("lat %s %d\\n", kernel, '
                    'nsecs - @launch_ns); >')
CONFIGS = [  # label, gpubt script (None: the plain program), extra environment
    ('plain', None, {}),
    ('host uprobe only', 'uprobe:cuda:cuLaunchKernel* { @n = count(); }', {}),
    ('gpu probe only', 'gpu:kprobe:tiny* /tid == 0/ < @n = count(); >', {}),
    ('launchlate.bt', 'tools/launchlate.bt', {}),
    ('launchlate.bt, copies', 'tools/launchlate.bt', {'GPUBT_AGENT_COPY_ONLY': '1'}),
    ('launchlate + printf', LAUNCHLATE_EXACT, {}),
]


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))] if v else float('nan')


def run_config(a, root, label, script, extra):
    prog = f'{a.bin}/launch_queue {SPIN_US} {ROUNDS}'
    env = dict(os.environ, GPUBT_AGENT_PATH=a.agent, **extra)
    if script is None:
        cmd = prog.split()
    else:
        source = ['-e', script] if not script.endswith('.bt') else [os.path.join(root, script)]
        cmd = [a.gpubt, '-v'] + source + ['-c', prog]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    self_lat = {}  # (name, round) -> (latency ns, call ns)
    for name, r, lat, call in re.findall(r'^self (\w+) (\d+) (-?\d+) (\d+)$', p.stdout, re.M):
        self_lat[(name, int(r))] = (int(lat), int(call))
    gpubt_lat = [int(x) for x in re.findall(r'^lat tinyIdle (-?\d+)$', p.stdout, re.M)]
    return p, self_lat, gpubt_lat


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bin', required=True)
    ap.add_argument('--gpubt', required=True)
    ap.add_argument('--agent', required=True)
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    print(f'launch_queue {SPIN_US} {ROUNDS}: tinyIdle on an idle stream, {ROUNDS} launches after '
          'the first; latency = launch call -> first thread, as the program measures it (us)')
    print('| configuration | first launch | median | p90 | max | launch call median | '
          'tinyQueued min |')
    print('|---|---|---|---|---|---|---|')
    for label, script, extra in CONFIGS:
        p, s, g = run_config(a, root, label, script, extra)
        idle = [s[('tinyIdle', r)] for r in range(1, ROUNDS + 1) if ('tinyIdle', r) in s]
        queued = [s[('tinyQueued', r)][0] for r in range(ROUNDS + 1) if ('tinyQueued', r) in s]
        if p.returncode != 0 or len(idle) != ROUNDS:
            print(f'| {label} | FAILED: exit {p.returncode}, {len(idle)} samples; '
                  f'{p.stderr.strip()[-300:]!r} |||||')
            continue
        lat = [x[0] / 1000 for x in idle]
        call = [x[1] / 1000 for x in idle]
        first = s.get(('tinyIdle', 0), (float('nan'),))[0] / 1000
        print(f'| {label} | {first:.1f} | {statistics.median(lat):.1f} | {pct(lat, 0.9):.1f} | '
              f'{max(lat):.1f} | {statistics.median(call):.1f} | {min(queued) / 1000:.0f} |')
        if g:  # gpubt's own measurement (from its uprobe) against the program's
            diff = [gv / 1000 - l for gv, l in zip(g[1:], lat)]
            print(f'|   gpubt minus program | | {statistics.median(diff):.1f} | | '
                  f'{max(diff, key=abs):.1f} | | |')
        notes = [l for l in p.stderr.splitlines() if 'set up at load' in l or 'copies' in l]
        for n in notes[:3]:
            print(f'|   {n} |||||||')


if __name__ == '__main__':
    main()
