"""Memory-access and barrier probes (issue 28) against tests/gpu/mem_access.cu's arithmetic, under
--gpu-backend ptx and sass: per kernel, the global loads and stores (2^20 each for the gathers of
strides 1, 2, 32 and for reverse_block), reverse_block's shared stores and loads (2^20 each) and
its barrier arrivals (2^20 at barrier 0), atomic_count's atomics (2^20), nothing else in those
kernels; and the 32-byte sectors
per warp-level load, averaged per gather: 4, 8 and 32 (4-byte elements). Then bank_conflicts per
shared-memory request on the bank_* kernels, directly and through tools/bankconflicts.bt, and
tools/barrierwait.bt on barrier_late (one warp per block 2^20 cycles late) and barrier_even. The
program checks its own output ("mem_access: ok")."""
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


# bank_* kernels (mem_access.cu): 64 blocks of 8 warps; each warp 4 row stores (conflict-free) and
# one load: down a column of float[32][32] (31), of float[32][33] (0), one word (0).
BANK_WARPS = 64 * 8
BANK_LOADS = {'bank_column': 31, 'bank_padded': 0, 'bank_broadcast': 0}
LEADER = '(active_lanes & ((1 << lane) - 1)) == 0'
BANK_SCRIPT = ('gpu:mem:shared:bank_* { $c = bank_conflicts; @lanes[kernel, access, $c] = count(); '
               f'if ({LEADER}) {{ @req[kernel, access, $c] = count(); }} }}')
LATE_CYCLES = 1 << 20  # kLateCycles


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
    bank_cases(a, row)
    barrier_cases(a, row)


def run(a, backend, args):
    return subprocess.run([a.gpubt, f'--gpu-backend={backend}', *args, '-c', f'{a.bin}/mem_access'],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, GPUBT_AGENT_PATH=a.agent))


def keyed(name, out):
    """@NAME[k1, k2, ...]: v lines as {(k1, k2, ...): v}."""
    return {tuple(s.strip() for s in key.split(',')): int(v)
            for key, v in re.findall(rf'^@{name}\[([^\]]*)\]: (\d+)$', out, re.M)}


def hists(name, out):
    """@NAME[key]: histograms (hist or lhist) as {key: [(low, count), ...]}, low in units."""
    unit = {'': 1, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
    got = {}
    for key, body in re.findall(rf'^@{name}\[([^\]]*)\]: ?\n((?:\[.*\n?)+)', out, re.M):
        got[key] = [(int(lo) * unit[u], int(n))
                    for lo, u, n in re.findall(r'^\[(\d+)([KMG]?)(?:\]|, [^)]*\))\s+(\d+)', body, re.M)]
    return got


def bank_cases(a, row):
    """bank_conflicts per request and per lane equal mem_access.cu's arithmetic, and the tool
    counts the same."""
    want_req = {}
    for k, extra in BANK_LOADS.items():
        want_req[(k, 'load', str(extra))] = BANK_WARPS
        want_req[(k, 'store', '0')] = 4 * BANK_WARPS
    want_lanes = {key: 32 * n for key, n in want_req.items()}
    for backend in ('ptx', 'sass'):
        name = f'bank_conflicts per shared request: 31 down a column, 0 padded or broadcast ({backend})'
        try:
            p = run(a, backend, ['-e', BANK_SCRIPT])
            req, lanes = keyed('req', p.stdout), keyed('lanes', p.stdout)
            ok = (p.returncode == 0 and 'mem_access: ok' in p.stdout and req == want_req and
                  lanes == want_lanes)
            row(name, ok, f'exit {p.returncode}; requests (kernel, access, bank_conflicts) {req}; '
                f'lanes {lanes}; stderr {p.stderr.strip()[-300:]!r}')
        except Exception as e:  # the rest of the suite still runs
            row(name, False, repr(e)[-500:])
        name = f'tools/bankconflicts.bt on the bank_* kernels ({backend})'
        try:
            p = run(a, backend, [os.path.join(a.src, 'tools', 'bankconflicts.bt')])
            requests, extra = keyed('requests', p.stdout), keyed('extra_wavefronts', p.stdout)
            conflicts = hists('conflicts', p.stdout)
            mine = lambda d: {k: v for k, v in d.items() if k[0] in BANK_LOADS}
            want_requests = {(k, acc): n for (k, acc, _), n in want_req.items()}
            want_extra = {(k, acc): n * int(c) for (k, acc, c), n in want_req.items()}
            col = [(lo, n) for lo, n in conflicts.get('bank_column, load', []) if n]
            ok = (p.returncode == 0 and mine(requests) == want_requests and
                  mine(extra) == want_extra and col == [(31, BANK_WARPS)])
            row(name, ok, f'exit {p.returncode}; requests {mine(requests)}; extra wavefronts '
                f'{mine(extra)}; bank_column loads {col}; stderr {p.stderr.strip()[-300:]!r}')
        except Exception as e:
            row(name, False, repr(e)[-500:])


def barrier_cases(a, row):
    """tools/barrierwait.bt: in barrier_late every block's spread is at least half the late
    warp's 2^20 cycles and 7 warps of 8 wait that long; in barrier_even no block spreads that
    far. (Half: the other warps may start a little after the late one, and the probe is in it.)"""
    half = LATE_CYCLES // 2
    for backend in ('ptx', 'sass'):
        name = f'tools/barrierwait.bt: barrier_late\'s late warp shows, barrier_even none ({backend})'
        try:
            p = run(a, backend, [os.path.join(a.src, 'tools', 'barrierwait.bt')])
            spread, wait = hists('block_spread_cycles', p.stdout), hists('warp_wait_cycles', p.stdout)
            count = lambda h, cond: sum(n for lo, n in h if cond(lo))
            late_s, even_s = spread.get('barrier_late', []), spread.get('barrier_even', [])
            late_w = wait.get('barrier_late', [])
            everything = lambda lo: True
            ok = (p.returncode == 0 and 'mem_access: ok' in p.stdout and
                  count(late_s, everything) == 64 and count(late_s, lambda lo: lo >= half) == 64
                  and count(even_s, everything) == 64 and
                  count(even_s, lambda lo: lo >= half) == 0 and
                  count(late_w, everything) == 8 * 64 and
                  count(late_w, lambda lo: lo >= half) == 7 * 64)
            row(name, ok, f'exit {p.returncode}; block spreads (low bucket, blocks): late '
                f'{[x for x in late_s if x[1]]}, even {[x for x in even_s if x[1]]}; warp waits, '
                f'late {[x for x in late_w if x[1]]}; stderr {p.stderr.strip()[-300:]!r}')
        except Exception as e:
            row(name, False, repr(e)[-500:])
