"""Block probes and active lanes (issue 28) on tests/gpu/divergence.cu, under --gpu-backend=ptx and
sass (each kernel's backend checked in -v's lines), against what the program prints from its own
launch shapes (7 blocks of 100 threads with early returns, a 3x2 grid of 13x5 blocks, one warp):
- gpu:block_begin and gpu:block_end fire once per block, together and each alone (the other side
  then a hidden probe), keyed by (bdim_x, bid_x, bid_y), with the same `sm` at both ends;
- popcount(active_lanes) at gpu:kprobe: 32 in full warps, the block size mod 32 in partial ones;
- popcount(active_lanes) at gpu:load (the memory probes of issue 28's other half; SKIP where this
  gpubt has no gpu:load): the loads before the branch see the lanes left after the early
  returns, the one in the branch only the odd lanes (16 of a full warp);
- the program's checksum is the same as run without gpubt."""
import os
import re
import subprocess

BACKEND_LINE = re.compile(r'^gpubt: kernel (.+): (ptx|sass) backend, probe mask', re.M)


def truth(stdout):
    blocks = re.search(r'^blocks (\d+)$', stdout, re.M)
    keys = {f'{s}, {x}, {y}' for s, x, y in re.findall(r'^block (\d+) (\d+) (\d+)$', stdout, re.M)}
    entry = {k: int(c) for k, c in re.findall(r'^entry (\d+) (\d+)$', stdout, re.M)}
    load = {k: int(c) for k, c in re.findall(r'^load (\d+) (\d+)$', stdout, re.M)}
    checksum = re.search(r'^checksum (\S+)$', stdout, re.M)
    return (int(blocks.group(1)) if blocks else None, keys, entry, load,
            checksum.group(1) if checksum else None)


def maps(stdout):
    """{map: {key: value}}; an unkeyed map's key is ''."""
    out = {}
    for m in re.finditer(r'^@(\w*)(?:\[([^\]]*)\])?: (\d+)$', stdout, re.M):
        out.setdefault(m.group(1), {})[m.group(2) or ''] = int(m.group(3))
    return out


def block_cases(a, row):
    prog = f'{a.bin}/divergence'
    if not a.gpubt:
        return row('block probes', None, 'no gpubt binary given')
    plain = subprocess.run([prog], capture_output=True, text=True, timeout=120)
    blocks, keys, entry, load, checksum = truth(plain.stdout)
    if plain.returncode != 0 or not blocks or len(keys) != blocks:
        return row('block probes: divergence runs', False,
                   f'exit {plain.returncode} {plain.stdout[-300:]!r} {plain.stderr[-300:]!r}')
    env = dict(os.environ, GPUBT_AGENT_PATH=a.agent)

    def traced(backend, script):
        p = subprocess.run([a.gpubt, f'--gpu-backend={backend}', '-v', '-e', script, '-c', prog],
                           env=env, capture_output=True, text=True, timeout=60)
        got = {k for k, b in BACKEND_LINE.findall(p.stderr) if k.startswith('diverge')
               and b == backend}
        same = truth(p.stdout)[4] == checksum
        return p, maps(p.stdout), (p.returncode == 0 and bool(got) and same,
                                   f'backend {backend} seen {bool(got)}, checksum same {same}, '
                                   f'exit {p.returncode} {p.stderr.strip()[-300:]!r}')

    once = {k: 1 for k in keys}
    for backend in ('ptx', 'sass'):
        p, m, (ok, detail) = traced(
            backend, 'gpu:block_begin:diverge { @b = count(); @in[bdim_x, bid_x, bid_y] = count(); '
            '@sm_in[bdim_x, bid_x, bid_y] = sm; } gpu:block_end:diverge { @e = count(); '
            '@out[bdim_x, bid_x, bid_y] = count(); @sm_out[bdim_x, bid_x, bid_y] = sm; }')
        good = (m.get('b') == {'': blocks} and m.get('e') == {'': blocks} and
                m.get('in') == once and m.get('out') == once and
                m.get('sm_in') is not None and m.get('sm_in') == m.get('sm_out'))
        row(f'block probes ({backend}): begin and end once per block of {blocks}, same sm',
            ok and good, f'@b {m.get("b")} @e {m.get("e")}, per block in/out right '
            f'{m.get("in") == once}/{m.get("out") == once}, sm same '
            f'{m.get("sm_in") == m.get("sm_out")}; {detail}')
        for kind in ('block_begin', 'block_end'):
            p, m, (ok, detail) = traced(backend, f'gpu:{kind}:diverge {{ @ = count(); }}')
            row(f'block probes ({backend}): gpu:{kind} alone fires {blocks} times',
                ok and m.get('') == {'': blocks}, f'@ {m.get("")}; {detail}')
        p, m, (ok, detail) = traced(backend,
                                    'gpu:kprobe:diverge { @[popcount(active_lanes)] = count(); }')
        got = m.get('', {})
        row(f'active_lanes ({backend}): 32 in full warps, block size mod 32 in partial ones',
            ok and got == entry, f'got {got} want {entry}; {detail}')
        p, m, (ok, detail) = traced(backend,
                                    'gpu:load:diverge { @[popcount(active_lanes)] = count(); }')
        if 'Invalid gpu probe type: load' in p.stderr:
            row(f'active_lanes at gpu:load ({backend}): 16 inside the branch', None,
                'this gpubt has no gpu:load probe')
            continue
        got = m.get('', {})
        row(f'active_lanes at gpu:load ({backend}): 16 inside the branch', ok and got == load,
            f'got {got} want {load}; {detail}')
