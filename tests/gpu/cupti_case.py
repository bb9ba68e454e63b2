"""A program that traces its own kernels with CUPTI (as the PyTorch profiler and Nsight Systems
do) hides every launch from the Compute Sanitizer (seen on the H100: bench/gpu/experiments): gpubt
says so instead of only "no kernel launch matched", and the program runs as it would alone."""
import os
import re
import subprocess


def cupti_cases(a, row):
    prog = f'{a.bin}/cupti_inflight'
    if not os.path.exists(prog):
        row('CUPTI in the program: gpubt says why no probe ran', None, 'cupti_inflight not built')
        return
    env = dict(os.environ, GPUBT_AGENT_PATH=a.agent)
    p = subprocess.run([a.gpubt, '-e', 'gpu:kprobe:tiny /tid == 0/ { @n = count(); }', '-c',
                        f'{prog} activity 100'], env=env, capture_output=True, text=True,
                       timeout=120)
    program_ok = re.search(r'x\[0\] (\d+) \(want (\d+)\)', p.stdout)
    ok = ('CUPTI' in p.stderr and 'sees no kernel launch' in p.stderr and program_ok and
          program_ok.group(1) == program_ok.group(2))
    row('CUPTI in the program: gpubt says why no probe ran', ok,
        f'exit {p.returncode} stdout {p.stdout.strip()[-200:]!r} stderr {p.stderr.strip()[-400:]!r}')
