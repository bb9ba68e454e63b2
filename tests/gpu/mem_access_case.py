"""Memory-access and barrier probes (issue 28) against tests/gpu/mem_access.cu's arithmetic, under
--gpu-backend ptx and sass: per kernel, the global loads and stores (2^20 each for the gathers of
strides 1, 2, 32 and for reverse_block), reverse_block's shared stores and loads (2^20 each) and
its barrier arrivals (2^20 at barrier 0), atomic_count's atomics (2^20), nothing else in those
kernels; and the 32-byte sectors
per warp-level load, averaged per gather: 4, 8 and 32 (4-byte elements). The program checks its
own output ("mem_access: ok")."""
import os
import re
import subprocess

N = 1 << 20
GATHERS = {'gather_s1': 4, 'gather_s2': 8, 'gather_s32': 32}
SCRIPT = ('gpu:mem:gather_s*, gpu:mem:reverse_block, gpu:mem:atomic_count '
          '{ @n[kernel, access, space] = count(); } '
          'gpu:load:global:gather_s* { @sectors[kernel] = avg(sectors); '
          '@sector_values[kernel, sectors] = count(); } '
          'gpu:barrier:reverse_block { @bar[kernel, barrier_id] = count(); }')


def expected_counts():
    want = {}
    for k in GATHERS:
        want[(k, 'load', 'global')] = N
        want[(k, 'store', 'global')] = N
    for access in ('load', 'store'):
        for space in ('global', 'shared'):
            want[('reverse_block', access, space)] = N
    want[('atomic_count', 'atomic', 'global')] = N
    return want


def parse(out):
    counts = {tuple(s.strip() for s in key.split(',')): int(v)
              for key, v in re.findall(r'^@n\[([^\]]*)\]: (\d+)$', out, re.M)}
    sectors = {k: int(v) for k, v in re.findall(r'^@sectors\[(\w+)\]: (\d+)$', out, re.M)}
    bars = {tuple(s.strip() for s in key.split(',')): int(v)
            for key, v in re.findall(r'^@bar\[([^\]]*)\]: (\d+)$', out, re.M)}
    # Each lane's sectors value, counted: shows which requests differ when the average is off
    # (on the H200 it printed 3/7/31 for 4/8/32 with every count exact).
    values = {key: int(v) for key, v in re.findall(r'^@sector_values\[([^\]]*)\]: (\d+)$', out,
                                                   re.M)}
    print(f'  sectors per lane, counted: {values}')
    return counts, sectors, bars


def mem_access_cases(a, row):
    if not a.gpubt:
        row('memory and barrier probes', None, 'no gpubt binary given')
        return
    for backend in ('ptx', 'sass'):
        name = f'memory and barrier probes count mem_access.cu\'s arithmetic ({backend})'
        try:
            p = subprocess.run([a.gpubt, f'--gpu-backend={backend}', '-e', SCRIPT,
                                '-c', f'{a.bin}/mem_access'], capture_output=True, text=True,
                               timeout=120, env=dict(os.environ, GPUBT_AGENT_PATH=a.agent))
            counts, sectors, bars = parse(p.stdout)
            ok = (p.returncode == 0 and 'mem_access: ok' in p.stdout and
                  counts == expected_counts() and sectors == GATHERS and
                  bars == {('reverse_block', '0'): N})
            row(name, ok, f'exit {p.returncode}; counts {counts}; sectors {sectors}; barriers '
                f'{bars}; stderr {p.stderr.strip()[-300:]!r}')
        except Exception as e:  # the rest of the suite still runs
            row(name, False, repr(e)[-500:])
