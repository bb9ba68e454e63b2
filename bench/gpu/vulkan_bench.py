#!/usr/bin/env python3
"""Issue 15's cost benchmark: vector add over 2^26 floats in a Vulkan compute shader
(tests/programs/vulkan: vk_vector_add and its vector_add.spv), plain vs gpubt with
`gpu:kretprobe:main { }` vs `{ @ = count(); }` (and keyed, `{ @[kernel] = count(); }`),
interleaved rounds. Each run times its dispatches
with Vulkan timestamp queries (vk_vector_add's `time` mode: one dispatch at a time, the median of
all but the first); the table shows the median of the rounds and the ratio to plain.

Runs on any Vulkan driver: NVIDIA's on the GPU machine, Mesa's lavapipe here (`--small`)."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

from bench_notes import finish

WORKGROUP = 64  # vector_add.comp's local_size_x
SCRIPTS = [  # label, script (None: the program alone), checks the map's count[, flags]
    ('plain', None, False),
    ('{ }', 'gpu:kretprobe:main { }', False),
    ('@ = count()', 'gpu:kretprobe:main { @ = count(); }', True),
    # Keyed by a key the same for the whole dispatch, spread over slots by SM (--gpu-key-spread,
    # default 32; 1 is one slot, as before the spread). No target in the issue.
    ('@[kernel] = count()', 'gpu:kretprobe:main { @[kernel] = count(); }', False),
    ('@[kernel] = count(), spread 256', 'gpu:kretprobe:main { @[kernel] = count(); }', False,
     '--gpu-key-spread=256'),
    ('@[kernel] = count(), spread 1', 'gpu:kretprobe:main { @[kernel] = count(); }', False,
     '--gpu-key-spread=1'),
]
TARGETS = {'{ }': 1.03, '@ = count()': 1.10}  # max x plain (issue 15, as the PTX backend on CUDA)


def dispatch_us(out):
    m = re.search(r'dispatch_us ([\d.]+) \(median of \d+ dispatches, ([^;]+); (.*)\)', out)
    return (float(m.group(1)), m.group(2), m.group(3)) if m else (None, None, None)


class Bench:
    def __init__(self, a):
        self.a = a
        self.n = 1 << a.size_log2
        self.env = dict(os.environ)
        if 'XDG_RUNTIME_DIR' not in self.env:  # lavapipe needs one
            self.env['XDG_RUNTIME_DIR'] = tempfile.mkdtemp(prefix='gpubt-xdg-')
        if a.icd:  # the loader's variable, new name and old
            self.env['VK_DRIVER_FILES'] = self.env['VK_ICD_FILENAMES'] = a.icd
        if a.layer_dir:
            self.env['GPUBT_VULKAN_LAYER_DIR'] = a.layer_dir
        self.notes = []
        self.device = self.timer = None

    def run_one(self, label, script, counted, *flags):
        cmd = f'{self.a.programs}/vk_vector_add {self.n} {self.a.dispatches} time'
        argv = cmd.split() if script is None else \
            [self.a.gpubt, *flags, '-v', '-e', script, '-c', cmd]
        p = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=600)
        out = p.stdout + p.stderr
        us, timer, device = dispatch_us(out)
        problems = []
        if p.returncode != 0:
            problems.append(f'exit {p.returncode}')
        if f'vk_vector_add: ok {self.n}' not in out:
            problems.append("the program's results are wrong")
        if script is not None and 'probes linked into main' not in p.stderr:
            problems.append('the probe was not linked')
        want = -(-self.n // WORKGROUP) * WORKGROUP * self.a.dispatches
        if counted and not re.search(rf'^@: {want}$', p.stdout, re.M):
            problems.append(f'@ is not {want}')
        if us is None:
            problems.append('no dispatch_us line')
        if problems:
            self.notes.append(f'{label}: {", ".join(problems)}; output {out.strip()[-300:]!r}')
            return None
        self.device, self.timer = device, timer
        return us

    def table(self):
        samples = {label: [] for label, *_ in SCRIPTS}
        for r in range(self.a.rounds):
            for label, script, counted, *flags in SCRIPTS:
                us = self.run_one(label, script, counted, *flags)
                if us is not None:
                    samples[label].append(us)
                print(f'round {r + 1} {label}: {us}', flush=True)
        med = {k: statistics.median(v) if v else None for k, v in samples.items()}
        plain = med['plain']
        print(f'\nvector add over 2^{self.a.size_log2} floats in a Vulkan compute shader on '
              f'{self.device}: time per dispatch (us; {self.timer}, median of '
              f'{self.a.dispatches - 1} dispatches after a warm-up; median of {self.a.rounds} '
              f'interleaved rounds)\n')
        print('| script at gpu:kretprobe:main | per dispatch (us) | vs plain | target |')
        print('|---|---|---|---|')
        for label, *_ in SCRIPTS:
            v = med[label]
            ratio = v / plain if v and plain else None
            target = '-'
            if label in TARGETS:
                met = ratio is not None and ratio <= TARGETS[label]
                target = f'{"met" if met else "MISSED"} (<= {TARGETS[label]}x plain)'
            print(f'| {"(none: plain)" if label == "plain" else f"`{label}`"} | '
                  f'{f"{v:.1f}" if v else "-"} | {f"{ratio:.3f}x" if ratio else "-"} | {target} |')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--programs', required=True, help='where vk_vector_add and vector_add.spv are')
    ap.add_argument('--gpubt', required=True)
    ap.add_argument('--layer-dir', help='GPUBT_VULKAN_LAYER_DIR (default: beside gpubt)')
    ap.add_argument('--icd', help="the Vulkan driver's ICD manifest (VK_DRIVER_FILES)")
    ap.add_argument('--size-log2', type=int, default=26)
    ap.add_argument('--dispatches', type=int, default=21, help='per run, the first a warm-up')
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--small', action='store_true',
                    help='2^20 floats, 5 dispatches, 2 rounds: a check that it runs (lavapipe)')
    a = ap.parse_args()
    if a.small:
        a.size_log2, a.dispatches, a.rounds = 20, 5, 2
    if a.dispatches < 2:
        ap.error('--dispatches must be at least 2 (the first is a warm-up)')
    b = Bench(a)
    b.table()
    return finish(b.notes)


if __name__ == '__main__':
    sys.exit(main())
