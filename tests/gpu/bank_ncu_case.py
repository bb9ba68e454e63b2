"""bank_conflicts against Nsight Compute (issue 28): ncu's shared-memory bank conflicts
(l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum) on mem_access's bank_* kernels,
summed per kernel over its launch, against gpubt's bank_conflicts summed once per request, under
--gpu-backend ptx and sass. The arithmetic says 512 x 31 for bank_column's loads and 0 elsewhere
(mem_access_case.py checks gpubt against it); this says whether ncu counts the same way. Run on its
own (--cases=bank_ncu): ncu replays each kernel."""
import csv
import io
import os
import re
import shutil
import subprocess

METRICS = {'load': 'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum',
           'store': 'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum'}
SCRIPT = ('gpu:mem:shared:bank_* { $c = bank_conflicts; '
          'if ((active_lanes & ((1 << lane) - 1)) == 0) { @c[kernel, access] = sum($c); } }')


def ncu_conflicts(a):
    """{(kernel, 'load'|'store'): conflicts} from ncu, and its process."""
    ncu = shutil.which('ncu') or '/usr/local/cuda/bin/ncu'
    p = subprocess.run([ncu, '--csv', '--kernel-name', 'regex:^bank_', '--metrics',
                        ','.join(METRICS.values()), f'{a.bin}/mem_access'],
                       capture_output=True, text=True, timeout=600)
    got = {}
    lines = p.stdout.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return got, p
    for r in csv.DictReader(io.StringIO('\n'.join(lines[start:]))):
        kernel = re.match(r'\w+', r.get('Kernel Name', ''))
        for access, metric in METRICS.items():
            if kernel and r.get('Metric Name') == metric:
                try:
                    v = int(float(r['Metric Value'].replace(',', '')))
                except ValueError:  # n/a on this GPU
                    continue
                key = (kernel.group(0), access)
                got[key] = got.get(key, 0) + v
    return got, p


def bank_ncu_case(a, row):
    want, p = ncu_conflicts(a)
    if not want:
        row('bank_conflicts = ncu', False, f'ncu gave no numbers: {(p.stdout + p.stderr)[-600:]!r}')
        return
    for backend in ('ptx', 'sass'):
        name = f'bank_conflicts summed per request = ncu\'s bank conflicts on bank_* ({backend})'
        g = subprocess.run([a.gpubt, f'--gpu-backend={backend}', '-e', SCRIPT, '-c',
                            f'{a.bin}/mem_access'], capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, GPUBT_AGENT_PATH=a.agent))
        got = {tuple(s.strip() for s in key.split(',')): int(v)
               for key, v in re.findall(r'^@c\[([^\]]*)\]: (\d+)$', g.stdout, re.M)}
        ok = g.returncode == 0 and all(got.get(k, 0) == v for k, v in want.items())
        row(name, ok, f'ncu {want}; gpubt {got}; exit {g.returncode} {g.stderr.strip()[-300:]!r}')
