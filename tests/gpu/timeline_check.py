#!/usr/bin/env python3
"""--timeline on the GPU (issue 16's Done-when): runs tools/kerneltime.bt with --timeline over a
workload (default: the PyTorch training step) and checks that the trace's GPU spans are the
launches kerneltime measured: per kernel, as many spans as its histogram counts, and the spans'
durations falling in the same log2 buckets, every one (the launch record and the script's `nsecs`
are one clock reading). Keeps the trace at --out.
usage: timeline_check.py --gpubt build/gpubt [--out FILE] [--cmd 'python3 ...torch_train_step.py']"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SUFFIX = {'': 1, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}


def bucket_floor(us):
    """The lower bound of hist()'s bucket for a value (bpftrace's log2 buckets)."""
    return 0 if us <= 0 else 1 << (us.bit_length() - 1)


def kerneltime_hists(text):
    """{kernel: {bucket lower bound: count}} from kerneltime.bt's text output."""
    hists, cur = {}, None
    for line in text.splitlines():
        m = re.match(r'^@kernel_us\[(.*)\]: ?$', line)
        if m:
            cur = hists.setdefault(m.group(1), collections.Counter())
            continue
        m = re.match(r'^\[(\d+)([KMG]?)[,\]].*?\s(\d+) \|', line)
        if cur is not None and m:
            cur[int(m.group(1)) * SUFFIX[m.group(2)]] += int(m.group(3))
    return hists


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--gpubt', required=True)
    ap.add_argument('--out', default=f'{ROOT}/bench/gpu/logs/timeline-train-step.json')
    ap.add_argument('--cmd', default=f'python3 {HERE}/torch_train_step.py')
    a = ap.parse_args()
    cmd = [a.gpubt, '--timeline', a.out, f'{ROOT}/tools/kerneltime.bt', '-c', a.cmd]
    print(' '.join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        print(f'[FAIL] gpubt exited {p.returncode}: {p.stderr[-1000:]}')
        return 1
    hists = kerneltime_hists(p.stdout)
    trace = json.load(open(a.out))
    spans = collections.defaultdict(collections.Counter)
    events = trace['traceEvents']
    for i, e in enumerate(events):
        if e['ph'] == 'X' and e['cat'] == 'gpu':
            # A span's args (the kernel's mangled name) are on the instant right after it.
            args = events[i + 1]['args'] if i + 1 < len(events) else {}
            spans[args['kernel']][bucket_floor(int(e['dur']))] += 1
    failed = 0
    other = trace['otherData']
    for key in ('dropped_events', 'lost_events', 'untimed_launches'):
        ok = other[key] == 0
        failed += not ok
        print(f'[{"PASS" if ok else "FAIL"}] {key} {other[key]}')
    total_hist = sum(sum(h.values()) for h in hists.values())
    total_spans = sum(sum(s.values()) for s in spans.values())
    ok = total_hist == total_spans and total_hist > 0
    failed += not ok
    print(f'[{"PASS" if ok else "FAIL"}] {total_spans} GPU spans, {total_hist} launches in '
          f'kerneltime\'s histograms, {len(hists)} kernels')
    for kernel in sorted(set(hists) | set(spans)):
        h, s = hists.get(kernel, collections.Counter()), spans.get(kernel, collections.Counter())
        n = sum(h.values())
        moved = sum((h - s).values())
        ok = sum(s.values()) == n and moved == 0
        failed += not ok
        if not ok or moved:
            print(f'[{"PASS" if ok else "FAIL"}] {kernel}: {sum(s.values())} spans, {n} '
                  f'launches, {moved} in another bucket; spans {dict(s)} hist {dict(h)}')
    print(f'trace: {a.out} ({os.path.getsize(a.out)} bytes); {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
