"""Issue 28 on PyTorch (SASS-only kernels): gpubt's memory probes on one named kernel count what
Nsight Compute counts for the same launches. tests/gpu/ml/elementwise_once.py runs a few
vectorized_elementwise_kernel launches over 2^20 floats; ncu (its own process, every launch of
that kernel) gives the thread-level global load and store instructions executed
(smsp__sass_thread_inst_executed_op_global_{ld,st}_pred_on.sum), the warp-level requests and the
32-byte sectors they touched (l1tex__t_{requests,sectors}_pipe_lsu_mem_global_op_{ld,st}.sum);
gpubt -c with gpu:load:global and gpu:store:global on the kernel must give the same totals (the Compute Sanitizer calls the
probe once per thread and executed memory instruction), and the job's checksum must be the
untraced one. Then the training step (tests/gpu/ml/train_transformer.py, 5 steps) with a memory
probe on the same kernel: it counts, and every step's loss is the untraced run's, bit for bit."""
import os
import re
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
PROG = os.path.join(HERE, 'ml', 'elementwise_once.py')
TRAIN = os.path.join(HERE, 'ml', 'train_transformer.py')
KERNEL = 'vectorized_elementwise_kernel'
# Each count with its ncu names, the first one ncu gives numbers for wins (some are n/a on a GPU):
# thread-level executed global load/store instructions (predicated on); warp-level ones, one per
# warp request (gpubt: the request's lowest active lane), also what L1TEX counts as requests; the
# 32-byte sectors those requests touched (gpubt: `sectors` summed over requests).
METRICS = {'ld': ['smsp__sass_thread_inst_executed_op_global_ld_pred_on.sum',
                  'sm__sass_thread_inst_executed_op_global_ld_pred_on.sum'],
           'st': ['smsp__sass_thread_inst_executed_op_global_st_pred_on.sum',
                  'sm__sass_thread_inst_executed_op_global_st_pred_on.sum'],
           'ldw': ['smsp__inst_executed_op_global_ld.sum', 'sm__inst_executed_op_global_ld.sum',
                   'l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum'],
           'stw': ['smsp__inst_executed_op_global_st.sum', 'sm__inst_executed_op_global_st.sum',
                   'l1tex__t_requests_pipe_lsu_mem_global_op_st.sum'],
           'ldsec': ['l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum'],
           'stsec': ['l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum']}
LEADER = '/(active_lanes & ((1 << lane) - 1)) == 0/'
SCRIPT = (f'gpu:load:global:{KERNEL} {{ @ld = count(); }} '
          f'gpu:store:global:{KERNEL} {{ @st = count(); }} '
          f'gpu:load:global:{KERNEL} {LEADER} {{ @ldw = count(); @ldsec = sum(sectors); }} '
          f'gpu:store:global:{KERNEL} {LEADER} {{ @stw = count(); @stsec = sum(sectors); }}')


def ncu_totals():
    ncu = shutil.which('ncu') or '/usr/local/cuda/bin/ncu'
    names = [m for ms in METRICS.values() for m in ms]
    p = subprocess.run([ncu, '--csv', '--kernel-name', f'regex:{KERNEL}', '--metrics',
                        ','.join(names), 'python3', PROG],
                       capture_output=True, text=True, timeout=600)
    per = {}  # (launch id, metric) -> value, numeric ones only
    for line in p.stdout.splitlines():
        cols = [c.strip('"') for c in re.findall(r'"((?:[^"]|"")*)"', line)]
        for m in names:
            if m in cols:
                try:
                    per[(cols[0], m)] = int(float(cols[-1].replace(',', '')))
                except ValueError:  # n/a: that name is not collected on this GPU
                    pass
    launches = sorted({l for l, _ in per})
    totals = {}
    for k, ms in METRICS.items():
        have = [m for m in ms if all((l, m) in per for l in launches)]
        totals[k] = sum(per[(l, have[0])] for l in launches) if have and launches else None
    return totals, len(launches), p


def checksum(text):
    m = re.search(r'^checksum (\S+)$', text, re.M)
    return m.group(1) if m else None


def mem_ncu_case(a, row):
    plain = subprocess.run(['python3', PROG], capture_output=True, text=True, timeout=300)
    want, launches, p = ncu_totals()
    if not launches or all(v is None for v in want.values()):
        ncu = shutil.which('ncu') or '/usr/local/cuda/bin/ncu'
        q = subprocess.run([ncu, '--query-metrics'], capture_output=True, text=True, timeout=60)
        names = sorted({w for w in q.stdout.split() if 'global_ld' in w or 'global_st' in w})
        row('gpu:load/store:global on a PyTorch kernel = ncu', False,
            f'ncu gave no numbers: {(p.stdout + p.stderr)[-600:]!r}; it knows {names[:40]}')
        return
    env = dict(os.environ, GPUBT_AGENT_PATH=a.agent)
    g = subprocess.run([a.gpubt, '-e', SCRIPT, '-c', f'python3 {PROG}'], env=env,
                       capture_output=True, text=True, timeout=600)
    got = {k: int(m.group(1)) if (m := re.search(rf'^@{k}: (\d+)$', g.stdout, re.M)) else None
           for k in METRICS}
    same = checksum(plain.stdout) is not None and checksum(plain.stdout) == checksum(g.stdout)
    compared = [k for k in METRICS if want[k] is not None]
    ok = compared and all(got[k] == want[k] for k in compared) and same and g.returncode == 0
    row('gpu:load/store:global on a PyTorch kernel = ncu', ok,
        f'{launches} launches of {KERNEL}: ncu {want}, gpubt {got} (compared: {compared}); '
        f'checksum traced = untraced {same}; exit {g.returncode} '
        f'{g.stderr.strip()[-300:]!r}')
    losses_case(a, row, env)


def losses_case(a, row, env):
    name = f'gpu:load:global:{KERNEL} on the training step: losses unchanged'
    plain = subprocess.run(['python3', TRAIN], capture_output=True, text=True, timeout=300)
    g = subprocess.run([a.gpubt, '-e', f'gpu:load:global:{KERNEL} {{ @loads = count(); }}', '-c',
                        f'python3 {TRAIN}'], env=env, capture_output=True, text=True, timeout=600)
    losses = lambda out: re.findall(r'^loss .*$', out, re.M)
    m = re.search(r'^@loads: (\d+)$', g.stdout, re.M)
    ok = (g.returncode == 0 and bool(losses(plain.stdout)) and
          losses(g.stdout) == losses(plain.stdout) and bool(m) and int(m.group(1)) > 0)
    row(name, ok, f'exit {g.returncode}; loads {m.group(1) if m else None}; losses traced '
        f'{losses(g.stdout)} untraced {losses(plain.stdout)}; {g.stderr.strip()[-300:]!r}')
