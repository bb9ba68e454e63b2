#!/usr/bin/env python3
"""Issue 12's real-workload GPU suite: PyTorch eager and torch.compile training steps, CUDA graphs,
Triton, jax.jit, a CuPy RawKernel, cuBLAS and two streams, each under four scripts (launch and
thread counts, tools/kerneltime.bt, tools/launchlate.bt) and three --gpu-backend settings.

Each case is judged against truth gpubt did not produce: the program's own printed results
(losses as float hex, checksums) equal to its plain run's, GPU launch counts equal to the host's
count of cuLaunchKernel* calls in the same run (for CUDA graphs: the kernel nodes the runtime
reports times the replays), thread counts equal to the grid arithmetic the host passed to
cuLaunchKernel or the program printed. Under --gpu-backend=ptx a kernel without usable PTX runs
uninstrumented: then the counts may fall short, and gpubt must say so.
usage: ml_suite.py --gpubt PATH --agent PATH [--jobs N] [--only REGEX] [--outputs FILE]"""
import argparse, concurrent.futures, os, re, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# name -> (command, uses CUDA graphs)
WORKLOADS = {
    'train_eager': (f'python3 {HERE}/ml/train_transformer.py', False),
    'train_compile': (f'python3 {HERE}/ml/train_transformer.py --compile', False),
    'cuda_graph': (f'python3 {HERE}/ml/cuda_graph.py', True),
    'triton': (f'python3 {HERE}/ml/triton_add.py', False),
    'jax_jit': (f'python3 {HERE}/ml/jax_jit.py', True),  # XLA may use command buffers (graphs)
    'cupy_raw': (f'python3 {HERE}/ml/cupy_raw.py', False),
    'cublas': (f'python3 {HERE}/torch_matmul.py', False),
    'streams': (f'python3 {HERE}/ml/streams.py', False),
}

THREADS = ('(uint64)args.gridDimX * args.gridDimY * args.gridDimZ * args.blockDimX * '
           'args.blockDimY * args.blockDimZ')
SCRIPTS = {
    'launches': ['-e', 'gpu:kprobe:* /tid == 0/ { @gpu = count(); } '
                       'uprobe:cuda:cuLaunchKernel* { @host = count(); }'],
    'threads': ['-e', 'gpu:kretprobe:* { @gpu[kernel] = count(); } '
                      f'uprobe:cuda:cuLaunchKernel {{ @host = sum({THREADS}); }} '
                      'uprobe:cuda:cuLaunchKernelEx, uprobe:cuda:cuLaunchCooperativeKernel '
                      '{ @other = count(); }'],
    'kerneltime': [f'{ROOT}/tools/kerneltime.bt'],
    'launchlate': [f'{ROOT}/tools/launchlate.bt'],
}
BACKENDS = ('auto', 'ptx', 'sass')
RESULT_LINE = re.compile(r'^(loss|checksum|graph_kernels|launches) .*$', re.M)
UNINSTRUMENTED = re.compile(r'run uninstrumented|runs uninstrumented')


def run(cmd, env, timeout):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.time() - t0
    except subprocess.TimeoutExpired as e:
        text = lambda b: b.decode(errors='replace') if isinstance(b, bytes) else (b or '')
        return -9, text(e.stdout), text(e.stderr) + f'\ntimed out after {timeout} s', timeout


def results_of(stdout):
    return [m.group(0) for m in RESULT_LINE.finditer(stdout)]


def scalar(stdout, name):
    m = re.search(rf'^@{name}: (\d+)$', stdout, re.M)
    return int(m.group(1)) if m else 0


def hist_total(stdout):
    """The counts of every hist bucket line ('[32, 64)   39 |@@@|', '(..., 0)   1 |@|')."""
    return sum(int(m.group(1))
               for m in re.finditer(r'^[\[(][^\n]*?[\])]\s+(\d+) \|', stdout, re.M))


def keyed(stdout, name):
    return {m.group(1): int(m.group(2))
            for m in re.finditer(rf'^@{name}\[(.*)\]: (\d+)$', stdout, re.M)}


def program_says(plain_out, key):
    m = re.search(rf'\b{key} (\d+)', plain_out)
    return int(m.group(1)) if m else None


# The kernel a workload launches itself, whose threads it prints (the rest are the framework's).
OWN_KERNEL = {'triton': 'add_kernel', 'cupy_raw': 'scale_add'}


def judge(workload, script, backend, rc, out, err, plain_out, graphs):
    """(ok, detail) of one traced run."""
    said_uninstrumented = bool(UNINSTRUMENTED.search(err))
    # exit 4: no gpu probe ran; right (and said) when --gpu-backend=ptx finds no PTX to use.
    if rc != 0 and not (rc == 4 and backend == 'ptx' and said_uninstrumented):
        return False, f'exit {rc}'
    if results_of(out) != results_of(plain_out):
        return False, f'program results differ: {results_of(out)} vs {results_of(plain_out)}'
    short_ok = backend == 'ptx' and said_uninstrumented  # a stated shortfall, not a wrong count

    def exact(got, want, what):
        if got == want:
            return True, f'{what} {got} = {want}'
        if short_ok and got < want:
            return True, f'{what} {got} < {want}, stated uninstrumented (ptx)'
        return False, f'{what} {got} != {want}'

    if script == 'launches':
        gpu, host = scalar(out, 'gpu'), scalar(out, 'host')
        if workload == 'cuda_graph':
            nodes, replays = program_says(plain_out, 'graph_kernels'), 10
            # Captured launches reach cuLaunchKernel* but run only at each replay.
            return exact(gpu, host - nodes + replays * nodes, 'gpu launches')
        if graphs:  # kernels of command buffers never pass cuLaunchKernel*
            return (gpu >= host or short_ok), f'gpu launches {gpu} >= host {host}'
        return exact(gpu, host, 'gpu launches')
    if script == 'threads':
        per_kernel = keyed(out, 'gpu')
        gpu, host, other = sum(per_kernel.values()), scalar(out, 'host'), scalar(out, 'other')
        if workload in OWN_KERNEL:
            return exact(per_kernel.get(OWN_KERNEL[workload], 0), program_says(plain_out, 'threads'),
                         f'{OWN_KERNEL[workload]} thread exits')
        if not other and not graphs:
            return exact(gpu, host, 'gpu thread exits')
        return gpu > 0 or short_ok, f'gpu thread exits {gpu} (host cuLaunchKernel {host}, ' \
                                    f'{other} other launches: no exact truth)'
    total = hist_total(out)
    return total > 0 or short_ok, f'{total} launches in the histograms'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--gpubt', required=True)
    ap.add_argument('--agent', required=True)
    ap.add_argument('--jobs', type=int, default=6)
    ap.add_argument('--only', default='')
    ap.add_argument('--timeout', type=int, default=240)
    ap.add_argument('--outputs', help='write every traced run\'s stdout and stderr here')
    ap.add_argument('--prometheus', default='',
                    help='a Prometheus server (xz\'d or not) for live_maps\' real scrapes')
    a = ap.parse_args()
    # JAX takes 75% of the GPU's memory at start unless told not to: the cases run side by side.
    env = dict(os.environ, GPUBT_AGENT_PATH=a.agent, PYTHONUNBUFFERED='1',
               XLA_PYTHON_CLIENT_PREALLOCATE='false')
    picked = {k: v for k, v in WORKLOADS.items() if re.search(a.only, k)}

    plain = {}
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        runs = {w: pool.submit(run, ['sh', '-c', cmd], env, a.timeout)
                for w, (cmd, _) in picked.items()}
        for w, f in runs.items():
            rc, out, err, secs = f.result()
            plain[w] = out if rc == 0 and results_of(out) else None
            print(f'[{"PASS" if plain[w] else "FAIL"}] plain {w}: exit {rc} ({secs:.1f}s) '
                  f'{results_of(out)} {err.strip()[-300:] if rc else ""}', flush=True)

    cases = [(w, s, b) for w in picked if plain[w] for s in SCRIPTS for b in BACKENDS]
    rows, outputs = [], {}
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = {}
        for w, s, b in cases:
            cmd = [a.gpubt, f'--gpu-backend={b}', *SCRIPTS[s], '-c', picked[w][0]]
            futures[(w, s, b)] = pool.submit(run, cmd, env, a.timeout)
        for (w, s, b), f in futures.items():
            rc, out, err, secs = f.result()
            ok, detail = judge(w, s, b, rc, out, err, plain[w], picked[w][1])
            tail = '' if ok else f' stderr {err.strip()[-400:]!r}'
            print(f'[{"PASS" if ok else "FAIL"}] {w} {s} {b}: {detail} ({secs:.1f}s){tail}',
                  flush=True)
            rows.append(ok)
            outputs[(w, s, b)] = (ok, out)
            if a.outputs:
                with open(a.outputs, 'a') as f:
                    f.write(f'===== {w} {s} {b}: exit {rc}\n{out}\n----- stderr\n{err}\n')
    # kerneltime counts each launch once: as many as the launches case counted, same backend.
    for (w, s, b), (ok, out) in outputs.items():
        launches = outputs.get((w, 'launches', b))
        if s != 'kerneltime' or not ok or not launches or not launches[0] or b == 'ptx':
            continue
        got, want = hist_total(out), scalar(launches[1], 'gpu')
        rows.append(got == want)
        print(f'[{"PASS" if got == want else "FAIL"}] {w} kerneltime {b} = launches: '
              f'{got} launches in the histograms, {want} counted', flush=True)
    # Issue 30: the step's syncs and cudaMalloc calls named by the script's own lines (pystack).
    if re.search(a.only, 'pystack_attribution'):
        import pystack_attribution
        ok, detail = pystack_attribution.run(a.gpubt, 'python3', env=env, timeout=a.timeout)
        rows.append(ok)
        print(f'[{"PASS" if ok else "FAIL"}] pystack_attribution: {detail}', flush=True)
    # Issue 26: the GPU's maps while the job runs (interval, --metrics).
    if re.search(a.only, 'live_maps'):
        import live_maps_check
        ok, detail = live_maps_check.run(a.gpubt, env, a.timeout, prometheus=a.prometheus)
        rows.append(ok)
        print(f'[{"PASS" if ok else "FAIL"}] live_maps: {detail}', flush=True)
    # Issue 30: tools/pymemleak.bt, pyallocchurn.bt and pylaunches.bt name the script's lines.
    if re.search(a.only, 'pystack_tools'):
        import pystack_tools
        ok, detail = pystack_tools.run(a.gpubt, 'python3', env=env, timeout=a.timeout)
        rows.append(ok)
        print(f'[{"PASS" if ok else "FAIL"}] pystack_tools: {detail}', flush=True)
    failed = rows.count(False) + sum(v is None for v in plain.values())
    print(f'{rows.count(True)} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
