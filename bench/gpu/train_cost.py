#!/usr/bin/env python3
"""What gpubt costs a real training step (issue 12): tests/gpu/ml/train_transformer.py --bench
(nn.TransformerEncoderLayer 512/8/2048, batch 32x256, AdamW; mean ms of 30 steps after 5 warm-up,
CUDA events) plain and under each script, interleaved round by round so drift hits every
configuration alike. Prints one row per configuration: every round's step time, the median and
the ratio of medians to plain.
usage: train_cost.py --gpubt PATH --agent PATH [--rounds N] [--compile] [--only REGEX]
                     [--bench-steps N]
                     [--extra SCRIPT]..."""
import argparse, os, re, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NOTHING = 'gpu:kretprobe:gpubt_matches_no_kernel { @n = count(); }'

CONFIGS = [
    ('plain', None),
    ('host only: tools/launchrate.bt', [f'{ROOT}/tools/launchrate.bt']),
    ('agent loaded, no kernel matches', ['-e', NOTHING]),
    ('gpu:kprobe:* /tid == 0/ { @n = count(); }',
     ['-e', 'gpu:kprobe:* /tid == 0/ { @n = count(); }']),
    ('gpu:kprobe:* { }', ['-e', 'gpu:kprobe:* { }']),
    # An exit probe that must stay at the exit (it reads the clock): what the exit patch costs.
    ('gpu:kretprobe:* /clock == 0/ { }', ['-e', 'gpu:kretprobe:* /clock == 0/ { }']),
    ('gpu:kretprobe:*gemm* { @n = count(); }',
     ['-e', 'gpu:kretprobe:*gemm* { @n = count(); }']),
    ('gpu:kretprobe:* { @n = count(); }', ['-e', 'gpu:kretprobe:* { @n = count(); }']),
    ('tools/kerneltime.bt', [f'{ROOT}/tools/kerneltime.bt']),
    # kerneltime's parts: counting the threads that leave (one atomic per warp on one word per
    # kernel), and launch_start's entry probe (with the agent's reset before each launch).
    ('gpu:kretprobe:* /last_thread/ { }', ['-e', 'gpu:kretprobe:* /last_thread/ { }']),
    ('gpu:kretprobe:* /launch_start == 0/ { }', ['-e', 'gpu:kretprobe:* /launch_start == 0/ { }']),
    ('tools/launchlate.bt', [f'{ROOT}/tools/launchlate.bt']),
    # Issue 25: --timeline's GPU spans from a launch-level probe (CUPTI's times, no kernel patched).
    ('--timeline, gpu:kretprobe:* /last_thread/ { @n = count(); }',
     ['--timeline', '/tmp/gpubt-train-cost-timeline.json', '-e', 'gpu:kretprobe:* /last_thread/ { @n = count(); }']),
    # The same kerneltime kept on the GPU (what an attached job, -p, gets: its agent has the
    # Compute Sanitizer): the exit patch and a kernel-keyed map.
    ('tools/kerneltime.bt on the GPU (GPUBT_LAUNCH_PROBES=device)',
     [f'{ROOT}/tools/kerneltime.bt'], {'GPUBT_LAUNCH_PROBES': 'device'}),
    # Issue 26: the same count read while the job runs, 10 times a second (the agent copies the
    # maps every 100 ms); against the row without interval, what live reads cost.
    ('... + interval:ms:100 { print(@n); } (live reads)',
     ['-e', 'gpu:kprobe:* /tid == 0/ { @n = count(); } interval:ms:100 { print(@n); }']),
    # The goal's rate, one read a second: time with --bench-steps 600 (3 s) so reads land in it.
    ('... + interval:s:1 { print(@n); } (live reads, 1/s)',
     ['-e', 'gpu:kprobe:* /tid == 0/ { @n = count(); } interval:s:1 { print(@n); }']),
]


def step_ms(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    m = re.search(r'^step_ms ([0-9.]+)$', p.stdout, re.M)
    if not m:
        print(f'  no step time from {cmd[-1]!r}: exit {p.returncode} {p.stderr[-500:]!r}',
              file=sys.stderr)
    return float(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--gpubt', required=True)
    ap.add_argument('--agent', required=True)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--compile', action='store_true')
    ap.add_argument('--only', default='')
    ap.add_argument('--bench-steps', type=int, default=30, help='timed steps per run')
    ap.add_argument('--extra', action='append', default=[], help='another script to time')
    a = ap.parse_args()
    env = dict(os.environ, GPUBT_AGENT_PATH=a.agent)
    prog = f'python3 {ROOT}/tests/gpu/ml/train_transformer.py --steps 1 --bench ' \
        f'--bench-steps {a.bench_steps}' + \
        (' --compile' if a.compile else '')
    configs = [c for c in CONFIGS if c[1] is None or re.search(a.only, c[0])]
    configs += [(script, ['-e', script]) for script in a.extra]
    times = {name: [] for name, *_ in configs}
    for r in range(a.rounds):
        for name, args, *more in configs:
            cmd = ['sh', '-c', prog] if args is None else [a.gpubt, *args, '-c', prog]
            times[name].append(step_ms(cmd, dict(env, **(more[0] if more else {}))))
            print(f'round {r + 1} {name}: {times[name][-1]} ms', flush=True)
    base = statistics.median([t for t in times['plain'] if t])
    print(f'\n| {"compiled " if a.compile else ""}training step, ms (rounds) | median | vs plain |')
    print('|---|---|---|')
    for name, *_ in configs:
        ok = [t for t in times[name] if t]
        med = statistics.median(ok) if ok else float('nan')
        rounds = ', '.join(f'{t:.2f}' if t else 'fail' for t in times[name])
        print(f'| {name} ({rounds}) | {med:.3f} | {med / base:.3f}x |')


if __name__ == '__main__':
    sys.exit(main())
