#!/usr/bin/env python3
"""Issue 28's cost row (run by `bench/gpu/ptx_bench.sh --mem` on a GPU machine): vectorAdd over 2^26
floats, plain vs `gpu:mem:global:vectorAdd { @[kernel] = count(); }` under the PTX and the SASS
backends, interleaved, medians of ROUNDS. Each traced run must count exactly 3 global accesses
(two loads, one store) per thread and launch; targets (issue 28): <= 2x plain under PTX, <= 8x
under SASS. --breakdown: the parts (an empty probe, an unkeyed count, the kernel key, the
entry probe's) side by side instead.
usage (bench/gpu/ptx_bench.sh --mem [--breakdown]): mem_bench.py --bin DIR --gpubt G --agent A"""
import argparse
import os
import re
import statistics

from bench_notes import finish
from ptx_bench import BACKEND_LINE, N, LAUNCHES, kernel_us, run

SCRIPT = 'gpu:mem:global:vectorAdd { @[kernel] = count(); }'
TARGETS = {'ptx': 2.0, 'sass': 8.0}  # max x plain
# --breakdown: where the cost goes, each against plain (backend, gpubt arguments).
BREAKDOWN = [
    ('ptx', ['-e', 'gpu:mem:global:vectorAdd { }']),
    ('ptx', ['-e', 'gpu:mem:global:vectorAdd /lane == 40/ { }']),
    ('ptx', ['-e', 'gpu:mem:global:vectorAdd { @ = count(); }']),
    ('ptx', ['-e', SCRIPT]),
    ('ptx', ['--gpu-key-spread=128', '-e', SCRIPT]),
    ('ptx', ['-e', 'gpu:kprobe:vectorAdd { @[kernel] = count(); }']),
    ('sass', ['-e', 'gpu:mem:global:vectorAdd { }']),
    ('sass', ['-e', 'gpu:mem:global:vectorAdd { @ = count(); }']),
    ('sass', ['-e', SCRIPT]),
]


def breakdown(a, env, vadd):
    """Kernel time per launch of each BREAKDOWN row and of plain, interleaved, medians."""
    rows = [('plain', None)] + [(f'{b}: {" ".join(args)}', [f'--gpu-backend={b}', *args])
                                for b, args in BREAKDOWN]
    t = {name: [] for name, _ in rows}
    for _ in range(a.rounds):
        for name, args in rows:
            p, _ = run(vadd.split() if args is None else [a.gpubt, *args, '-c', vadd], env=env)
            t[name].append(kernel_us(p) if p.returncode == 0 else None)
    med = {k: statistics.median([x for x in v if x]) if any(v) else None for k, v in t.items()}
    print('| backend: script | us per launch | vs plain |\n|---|---|---|')
    for name, _ in rows:
        m = med[name]
        print(f'| `{name}` | {m:.1f} | {m / med["plain"]:.2f}x |' if m else f'| `{name}` | fail | |')
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bin', required=True, help='vectorAdd')
    ap.add_argument('--gpubt', required=True)
    ap.add_argument('--agent', required=True)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--breakdown', action='store_true', help='the cost of each part instead')
    a = ap.parse_args()
    env = dict(os.environ, GPUBT_AGENT_PATH=a.agent)
    vadd = f'{a.bin}/vectorAdd {N} {LAUNCHES}'
    if a.breakdown:
        return breakdown(a, env, vadd)
    want = 3 * N * LAUNCHES
    samples = {k: [] for k in ('plain', 'ptx', 'sass')}
    notes = []
    for r in range(a.rounds):
        p, _ = run(vadd.split())
        samples['plain'].append(kernel_us(p))
        for backend in ('ptx', 'sass'):
            p, _ = run([a.gpubt, f'--gpu-backend={backend}', '-v', '-e', SCRIPT, '-c', vadd],
                       env=env)
            got = BACKEND_LINE.search(p.stderr)
            rows = re.findall(r'^@\[vectorAdd[^\]]*\]: (\d+)$', p.stdout, re.M)
            ok = p.returncode == 0 and got and got.group(1) == backend and \
                len(rows) == 1 and int(rows[0]) == want
            samples[backend].append(kernel_us(p) if ok else None)
            if not ok:
                notes.append(f'round {r + 1} {backend}: exit {p.returncode}, backend '
                             f'{got.group(1) if got else "not reported"}, count {rows} (want '
                             f'{want}); stderr {p.stderr.strip()[-300:]!r}')
        print(f'round {r + 1}: ' + ', '.join(f'{k} {v[-1]}' for k, v in samples.items()),
              flush=True)
    med = {k: statistics.median([x for x in v if x is not None]) if any(x is not None for x in v)
           else None for k, v in samples.items()}
    print(f'\nvectorAdd over 2^26 floats, kernel time per launch (us, CUDA events, mean of '
          f'{LAUNCHES - 1} launches; median of {a.rounds} interleaved rounds)\n')
    print('| script | plain | PTX backend | SASS backend | PTX vs plain | SASS vs plain | target |')
    print('|---|---|---|---|---|---|---|')
    ratio = {b: med[b] / med['plain'] if med[b] and med['plain'] else None for b in TARGETS}
    target = '; '.join(f'{b} {"met" if ratio[b] and ratio[b] <= t else "MISSED"} (<= {t}x)'
                       for b, t in TARGETS.items())
    fmt = lambda x: f'{x:.3f}x' if x else '-'
    print(f'| `{SCRIPT}` | {med["plain"]} | {med["ptx"]} | {med["sass"]} | {fmt(ratio["ptx"])} | '
          f'{fmt(ratio["sass"])} | {target} |')
    return finish(notes)


if __name__ == '__main__':
    raise SystemExit(main())
