#!/usr/bin/env python3
"""What the CUDA agent's launch timer (issue 25: CUPTI kernel activity, runtime/cuda_agent/
launch_timer.h) costs the issue-12 training step, and what it sees: train_transformer.py --bench
plain, under the agent timing every launch (its records read off the socket as gpubt would), and
under the dormant agent; interleaved rounds, median step time of each. Also: the launches per step
the timer reported against the PyTorch profiler's count for the same step (truth for counts).
usage: launch_timer_cost.py --agent PATH [--rounds 3] [--steps 200]"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tests', 'gpu'))
from agent_socket import run_under_agent  # noqa: E402
from launch_timer_case import FINISHED_LAUNCHES, decode  # noqa: E402

TRAIN = os.path.join(HERE, '..', '..', 'tests', 'gpu', 'ml', 'train_transformer.py')


def step_ms(text):
    m = re.search(r'^step_ms ([0-9.]+)$', text, re.M)
    return float(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--agent', required=True)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--steps', type=int, default=200)
    a = ap.parse_args()
    argv = ['python3', TRAIN, '--steps', '1', '--bench', '--bench-steps', str(a.steps)]
    times = {'plain': [], 'dormant agent': [], 'agent timing launches': []}
    launches = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
            times['plain'].append(step_ms(p.stdout))
            p = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                               env=dict(os.environ, CUDA_INJECTION64_PATH=a.agent))
            times['dormant agent'].append(step_ms(p.stdout))
            p, got = run_under_agent(a.agent, tmp, argv, ['live\t100', 'time\t1'],
                                     FINISHED_LAUNCHES, decode, timeout=600)
            times['agent timing launches'].append(step_ms(p.stdout))
            launches.append(sum(len(rec['launches']) for _, rec in got))
            print(f'round {r + 1}: ' + ', '.join(f'{k} {v[-1]}' for k, v in times.items()) +
                  f'; {launches[-1]} launches timed; stderr {p.stderr.strip()[-200:]!r}', flush=True)
    base = statistics.median(t for t in times['plain'] if t)
    print('\n| training step, ms (rounds) | median | vs plain |\n|---|---|---|')
    for k, v in times.items():
        ok = [t for t in v if t]
        med = statistics.median(ok) if ok else float('nan')
        print(f'| {k} ({", ".join(f"{t:.2f}" if t else "fail" for t in v)}) | {med:.3f} | '
              f'{med / base:.3f}x |')
    print(f'launches timed per run: {launches} ({a.steps + 6} steps a run)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
