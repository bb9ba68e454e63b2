#!/usr/bin/env python3
"""Issue 25: kernel durations as the vendor's profiler reports them. The same training step
(tests/gpu/ml/train_transformer.py, eager and torch.compile'd) runs twice from a cold process:
under the PyTorch profiler (CUPTI kernel activity), and under `gpubt -c` with kerneltime's probe
shape (`gpu:kretprobe:* /last_thread/`, which gpubt runs in gpubt from each launch's times, no
kernel patched). Per kernel (gpubt's `kernel` key: the demangled base name, names of 64
characters or more cut to 50 and a hash, so the profiler's launches are grouped the same way),
the launch counts must be equal and the mean durations within 3% or 1 us; the losses must be
the untraced run's; `--dry-run -v` must say the probe runs in gpubt per finished launch.
The same again with the job attached (-p): started with the agent in timing mode (`gpubt agent
env --timing`), held after CUDA's start until gpubt attached, then trained.

usage: kernel_time_check.py --gpubt G [--steps N] [--no-attach | --only-attach]   (GPUBT_AGENT_PATH set; CUDA machine)"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, 'ml', 'train_transformer.py')
SCRIPT = ('gpu:kretprobe:* /last_thread/ { @n[kernel] = count(); '
          '@ns[kernel] = sum(nsecs - launch_start); }')
KEPT = 50


def base_name(sig):
    """runtime/ptx/kernel_match.cpp's base_name: 'void ns::k<int>(float*, int)' -> 'k'."""
    end = len(sig)
    if sig.endswith(')'):
        depth = 0
        for i in range(len(sig) - 1, -1, -1):
            depth += 1 if sig[i] == ')' else -1 if sig[i] == '(' else 0
            if depth == 0:
                end = i
                break
    name, start, depth = sig[:end], 0, 0
    for i, c in enumerate(name):
        depth += 1 if c in '<(' else -1 if c in '>)' else 0
        if depth == 0 and (c == ' ' or (c == ':' and name[i + 1:i + 2] == ':')):
            start = i + (1 if c == ' ' else 2)
    name = name[start:]
    lt = name.find('<')
    return name if lt <= 0 else name[:lt]


def key_of(name):
    """Profiler name -> comparable key: the base name, long ones by their kept prefix."""
    b = base_name(name)
    return b[:KEPT] + '~' if len(b) >= 64 else b


def gpubt_key(k):
    return k[:KEPT] + '~' if '~' in k and len(k) > KEPT else k


def losses(text):
    return re.findall(r'^loss \d+ \S+$', text, re.M)


def profile_run(args, steps, compiled):
    with tempfile.NamedTemporaryFile(suffix='.jsonl') as f:
        p = subprocess.run(['python3', TRAIN, '--steps', str(steps), '--profile', f.name] + args,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        per = defaultdict(list)
        for line in open(f.name):
            e = json.loads(line)
            per[key_of(e['name'])].append(e['us'] * 1000.0)
    return per, losses(p.stdout)


def maps_got(json_lines):
    """{key: (launches, mean ns)} from gpubt -f json's @n and @ns maps."""
    maps = {}
    for line in json_lines.splitlines():
        if line.startswith('{'):
            obj = json.loads(line)
            if obj.get('type') == 'map':
                maps.update(obj['data'])
    n, ns = maps.get('@n', {}), maps.get('@ns', {})
    # Distinct long names sharing their kept prefix (triton_poi_fused__unsafe_view_add_clone_...)
    # are one key to the profiler's side: sum them here too, not keep the last.
    totals = defaultdict(lambda: [0, 0])
    for k, count in n.items():
        totals[gpubt_key(k)][0] += count
        totals[gpubt_key(k)][1] += ns.get(k, 0)
    return {k: (c, t / c) for k, (c, t) in totals.items() if c}


def gpubt_run(gpubt, args, steps):
    cmd = [gpubt, '-f', 'json', '-e', SCRIPT, '-c', f'python3 {TRAIN} --steps {steps} ' + ' '.join(args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    got = maps_got(p.stdout)
    # -f json sends the child's stdout to stderr (driver/trace.cpp: the JSON stream stays clean).
    return got, losses(p.stderr), p.stderr


def attached_run(gpubt, args, steps):
    """gpubt_run's answer for the job started in timing mode and attached with -p."""
    lines = subprocess.run([gpubt, 'agent', 'env', '--timing'], capture_output=True,
                           text=True).stdout
    env = dict(os.environ, **dict(re.findall(r'^export (\w+)=(\S+)$', lines, re.M)))
    with tempfile.TemporaryDirectory() as tmp:
        go = os.path.join(tmp, 'go')
        job = subprocess.Popen(['python3', TRAIN, '--steps', str(steps), '--hold', go] + args,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert job.stdout.readline().startswith('held'), job.stderr.read()[-2000:]
        err_path = os.path.join(tmp, 'err')
        with open(err_path, 'w') as err_file:
            g = subprocess.Popen([gpubt, '-v', '-f', 'json', '-p', str(job.pid), '-e', SCRIPT],
                                 stdout=subprocess.PIPE, stderr=err_file, text=True)
            deadline = time.time() + 120
            while f'attached to process {job.pid}' not in open(err_path).read():
                assert g.poll() is None and time.time() < deadline, open(err_path).read()[-2000:]
                time.sleep(0.05)
            open(go, 'w').close()
            job_out, job_err = job.communicate(timeout=600)
            out, _ = g.communicate(timeout=120)  # gpubt ends with the process it traces
        err = open(err_path).read()
    assert job.returncode == 0 and g.returncode == 0, f'{job.returncode} {g.returncode} {err[-2000:]}'
    return maps_got(out), losses(job_out), err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--gpubt', required=True)
    ap.add_argument('--steps', type=int, default=20)
    ap.add_argument('--no-attach', action='store_true', help='the -c runs only')
    ap.add_argument('--only-attach', action='store_true', help='the -p runs only')
    a = ap.parse_args()
    failed = False
    dry = subprocess.run([a.gpubt, '--dry-run', '-v', '-e', SCRIPT, '-c', f'python3 {TRAIN}'],
                         capture_output=True, text=True)
    on_host = 'runs in gpubt once per finished launch' in dry.stdout + dry.stderr
    print(f'[{"PASS" if on_host else "FAIL"}] --dry-run -v says where the probe runs: '
          f'{(dry.stdout + dry.stderr).strip()[-300:]!r}')
    failed |= not on_host
    runs = [] if a.only_attach else [('eager', [], False), ('compiled', ['--compile'], False)]
    if not a.no_attach:
        runs += [('eager, -p (timing mode)', [], True), ('compiled, -p (timing mode)', ['--compile'], True)]
    for label, args, attach in runs:
        plain = subprocess.run(['python3', TRAIN, '--steps', str(a.steps)] + args,
                               capture_output=True, text=True, timeout=600)
        prof, prof_losses = profile_run(args, a.steps, bool(args))
        got, traced_losses, err = (attached_run if attach else gpubt_run)(a.gpubt, args, a.steps)
        same = losses(plain.stdout) == traced_losses and traced_losses
        print(f'[{"PASS" if same else "FAIL"}] {label}: losses traced = untraced '
              f'({len(traced_losses)} steps)')
        failed |= not same
        bad, rows = [], []
        total_prof = sum(len(v) for v in prof.values())
        total_got = sum(c for c, _ in got.values())
        for k in sorted(set(prof) | set(got), key=lambda k: -sum(prof.get(k, [0]))):
            pc = len(prof.get(k, []))
            pm = sum(prof[k]) / pc if pc else 0
            gc, gm = got.get(k, (0, 0))
            tol = max(0.03 * pm, 1000.0)
            ok = pc == gc and abs(gm - pm) <= tol
            rows.append(f'  {"ok " if ok else "BAD"} {k[:60]:60} profiler {pc:5d} x {pm / 1e3:9.2f} us'
                        f'  gpubt {gc:5d} x {gm / 1e3:9.2f} us')
            if not ok:
                bad.append(k)
        print('\n'.join(rows))
        ok = not bad and total_prof == total_got
        print(f'[{"PASS" if ok else "FAIL"}] {label}: {len(prof)} kernels, launches profiler '
              f'{total_prof} gpubt {total_got}; per-kernel mean within 3%/1 us: '
              f'{len(prof) - len(bad)}/{len(prof)}')
        failed |= not ok
        if bad:
            print(err[-1500:])
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
