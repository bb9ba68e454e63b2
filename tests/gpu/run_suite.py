#!/usr/bin/env python3
"""The GPU suite (run by scripts/gpu-e2e.sh on a machine with an NVIDIA GPU): the agent with a
hand-written probe module (selftest_patch.cu), then gpubt end to end, then timings. Prints one
PASS/FAIL/SKIP row per case and exits 1 if any failed."""
import argparse, glob, os, re, struct, subprocess, sys, tempfile, time

from cupti_case import cupti_cases
from hang_case import hang_cases
from xid_case import xid_case
from launch_timer_case import launch_timer_cases
from block_case import block_cases
from mem_access_case import mem_access_cases
from issue6_cases import issue6_cases

NEVER = '-'  # a kernel pattern no kernel name matches
SLOT_READY = 2
rows = []


def row(name, ok, detail=''):
    status = 'PASS' if ok is True else 'SKIP' if ok is None else 'FAIL'
    rows.append((name, status, detail))
    print(f'[{status}] {name}: {detail}', flush=True)


def run(cmd, env=None, timeout=120):
    """A hung run is a failed case (exit -9, 'timed out' on stderr), not the end of the suite."""
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = lambda b: b.decode(errors='replace') if isinstance(b, bytes) else (b or '')
        p = subprocess.CompletedProcess(cmd, -9, out(e.stdout),
                                        out(e.stderr) + f'\ntimed out after {timeout} s')
    return p, time.time() - t0


# --- the agent's files (runtime/abi/agent_protocol.cpp) -------------------------------------

def write_config(path, cubin, results, probes, maps, ring=0, functions=None):
    with open(path, 'w') as f:
        f.write(f'results\t{results}\nring\t{ring}\ncubin\tsm_90\t{cubin}\n')
        for i, (probe, pattern) in enumerate(probes):
            point = 'exit' if probe == 'kretprobe' else 'enter'
            function = functions[i] if functions else f'gpubt_probe_{i}'
            f.write(f'probe\t{point}\t{function}\tgpu:{probe}:{pattern}\t{pattern}\n')
        for cap, key, value in maps:
            f.write(f'map\t{cap}\t{key}\t{value}\t{8 + key + value}\t0\n')


def read_results(path):
    """Images and messages of every PATH.PID file (one per CUDA process)."""
    images, messages = [], []
    for name in sorted(glob.glob(glob.escape(path) + '.*')):
        if not name.endswith('.tmp'):
            i, m = read_results_file(name)
            images += i
            messages += m
    return images, messages


def has_results(path):
    return bool(glob.glob(glob.escape(path) + '.*'))


def read_results_file(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'GPUBTRS1', 'bad magic'
    pos = 8

    def u64():
        nonlocal pos
        v, = struct.unpack_from('<Q', data, pos)
        pos += 8
        return v

    def blob():
        nonlocal pos
        n = u64()
        b = data[pos:pos + n]
        pos += n
        return b

    images = []
    for _ in range(u64()):
        img = {'device': u64()}
        img['launches'] = [u64() for _ in range(u64())]
        img['maps'] = [blob() for _ in range(u64())]
        img['ring'] = blob()
        img['ring_drops'] = u64()
        images.append(img)
    messages = [blob().decode() for _ in range(u64())]
    return images, messages


def map_entries(storage):
    """(key bytes, value words) of the READY slots of one device map (device_abi.h)."""
    cap, key_size, value_size, entry_size = struct.unpack_from('<IIII', storage, 0)
    out = []
    for i in range(cap):
        off = 32 + i * entry_size
        state, = struct.unpack_from('<Q', storage, off)
        if state == SLOT_READY:
            key = storage[off + 8:off + 8 + key_size]
            vals = struct.unpack_from(f'<{value_size // 8}Q', storage, off + 8 + key_size)
            out.append((key, vals))
    return out


def checksum(stdout):
    m = re.search(r'checksum ([0-9a-f]+)', stdout)
    return m.group(1) if m else None


# --- cases ------------------------------------------------------------------------------------

def agent_env(agent, config, verbose=False):
    env = dict(os.environ)
    if verbose:
        env['GPUBT_AGENT_VERBOSE'] = '1'
    env['CUDA_INJECTION64_PATH'] = agent
    env['GPUBT_AGENT_CONFIG'] = config
    return env


def agent_case(a, tmp, name, prog, args, pattern, threads, launches, expect_plain):
    cfg, res = os.path.join(tmp, name + '.cfg'), os.path.join(tmp, name + '.res')
    write_config(cfg, a.selftest_cubin, res, [('kretprobe', pattern), ('kprobe', pattern)],
                 [(65536, 8, 8), (1, 0, 8)])
    p, _ = run([prog] + args, env=agent_env(a.agent, cfg, verbose=True))
    if p.returncode != 0:
        return row(name, False, f'exit {p.returncode}: {p.stderr.strip()[:300]}')
    if checksum(p.stdout) != expect_plain:
        return row(name, False, f'checksum {checksum(p.stdout)} != plain {expect_plain}')
    if not has_results(res):
        return row(name, False, f'no results file; stdout {p.stdout.strip()!r} stderr {p.stderr.strip()[-600:]!r}')
    images, messages = read_results(res)
    if len(images) != 1:
        return row(name, False, f'{len(images)} images, messages {messages}')
    img = images[0]
    per_tid = map_entries(img['maps'][0])
    keys = sorted(struct.unpack('<Q', k)[0] for k, _ in per_tid)
    bad = [(k, v) for k, v in per_tid if v[0] != launches]
    total = map_entries(img['maps'][1])
    ok = (keys == list(range(threads)) and not bad and len(total) == 1 and
          total[0][1][0] == threads * launches and img['launches'] == [launches, launches])
    row(name, ok, f'{len(keys)} tids (want {threads}), {len(bad)} wrong counts, entry total '
        f'{total[0][1][0] if total else None} (want {threads * launches}), launches '
        f'{img["launches"]}, stderr {p.stderr.strip()[:200]!r}')


def agent_cases(a, tmp, plain):
    b = a.bin
    agent_case(a, tmp, 'agent: vectorAdd exit per-tid + entry total (PTX+SASS build)',
               f'{b}/vectorAdd', ['50000', '3'], 'vectorAdd', 50176, 3, plain['vectorAdd'])
    agent_case(a, tmp, 'agent: vectorAdd SASS-only build (compute_90,code=sm_90)',
               f'{b}/vectorAdd_sass', ['50000', '3'], '_Z9vectorAdd*', 50176, 3,
               plain['vectorAdd_sass'])
    agent_case(a, tmp, 'agent: vectorAdd PTX-only build (JIT)', f'{b}/vectorAdd_ptx',
               ['50000', '2'], 'vectorAdd(float const*, float const*, float*, int)', 50176, 2,
               plain['vectorAdd_ptx'])
    agent_case(a, tmp, 'agent: grid3d 2-D grid x 3-D block', f'{b}/grid3d', [], 'grid*', 768, 1,
               plain['grid3d'])
    # A pattern that matches nothing: program unchanged, a clear message.
    cfg, res = os.path.join(tmp, 'nomatch.cfg'), os.path.join(tmp, 'nomatch.res')
    write_config(cfg, a.selftest_cubin, res, [('kretprobe', 'noSuchKernel')], [(65536, 8, 8)])
    p, _ = run([f'{b}/vectorAdd', '50000', '2'], env=agent_env(a.agent, cfg))
    images, messages = read_results(res)
    launches = [img['launches'] for img in images]
    ok = (p.returncode == 0 and checksum(p.stdout) == plain['vectorAdd'] and launches == [[0]])
    row('agent: kernel pattern matching nothing', ok, f'launches {launches}, stderr {p.stderr.strip()!r}')
    # One probe of two cannot be patched in (its function is not in the probe code): the module
    # is left as loaded, not patched with the other probe alone (issue 23).
    write_config(cfg, a.selftest_cubin, res, [('kretprobe', 'vectorAdd'), ('kprobe', 'vectorAdd')],
                 [(65536, 8, 8), (1, 0, 8)], functions=['gpubt_probe_0', 'gpubt_no_such_probe'])
    p, _ = run([f'{b}/vectorAdd_sass', '50000', '2'], env=agent_env(a.agent, cfg))
    images, messages = read_results(res)
    launches = [img['launches'] for img in images]
    entries = [len(map_entries(m)) for img in images for m in img['maps']]
    ok = (p.returncode == 0 and checksum(p.stdout) == plain['vectorAdd_sass'] and
          all(n == 0 for l in launches for n in l) and not any(entries) and
          any('left as loaded' in m for m in messages))
    row('agent: a probe that cannot be patched in leaves the module as loaded', ok,
        f'launches {launches}, map entries {entries}, messages {messages}')
    # Unloadable probe code: the program runs uninstrumented and says why.
    write_config(cfg, '/nonexistent.cubin', res, [('kretprobe', 'vectorAdd')], [(16, 8, 8)])
    p, _ = run([f'{b}/vectorAdd', '50000', '2'], env=agent_env(a.agent, cfg))
    ok = p.returncode == 0 and checksum(p.stdout) == plain['vectorAdd'] and 'gpubt:' in p.stderr
    row('agent: missing probe code -> runs uninstrumented', ok, f'stderr {p.stderr.strip()!r}')


def agent_timings(a, tmp):
    """vectorAdd over 2^26 floats, kernel time per launch: plain, empty exit patch, one global
    atomic per thread at exit (hand-written patches)."""
    prog, args = f'{a.bin}/vectorAdd', [str(1 << 26), '21']
    out = {}
    p, _ = run([prog] + args)
    out['plain'] = float(re.search(r'kernel_us ([\d.]+)', p.stdout).group(1))
    for label, probes in [('empty patch', [('kretprobe', NEVER)] * 2 + [('kretprobe', 'vectorAdd')]),
                          ('@ = count() (1 atomic/thread)',
                           [('kretprobe', NEVER)] * 3 + [('kretprobe', 'vectorAdd')])]:
        tag = re.sub(r'\W+', '_', label)
        cfg, res = os.path.join(tmp, tag + '.cfg'), os.path.join(tmp, tag + '.res')
        write_config(cfg, a.selftest_cubin, res, probes, [(16, 8, 8), (1, 0, 8)])
        p, _ = run([prog] + args, env=agent_env(a.agent, cfg))
        m = re.search(r'kernel_us ([\d.]+)', p.stdout)
        out[label] = float(m.group(1)) if m else None
        if label.startswith('@') and has_results(res):
            images, _ = read_results(res)
            total = map_entries(images[0]['maps'][1])
            want = (1 << 26) * 21
            row('agent: 2^26 x 21 launches exit count', total and total[0][1][0] == want,
                f'{total[0][1][0] if total else None} (want {want})')
    for k, v in out.items():
        ratio = f'{v / out["plain"]:.2f}x' if v else '-'
        print(f'TIMING vectorAdd 2^26 {k}: {v} us/launch ({ratio})', flush=True)
    return out


# --- gpubt end to end ---------------------------------------------------------------------------

def gpubt_case(a, name, script, command, check, plain=None, opts=(), env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    env['GPUBT_AGENT_PATH'] = a.agent
    p, secs = run([a.gpubt, *opts, '-e', script, '-c', command], env=env)
    ok, detail = check(p)
    if ok and plain is not None and checksum(p.stdout) != plain:
        ok, detail = False, f'checksum {checksum(p.stdout)} != plain {plain}'
    row(name, ok, f'{detail} ({secs:.1f}s) stderr {p.stderr.strip()[-300:]!r}')
    return p


def keyed_counts(stdout):
    return {m.group(1): int(m.group(2)) for m in re.finditer(r'^@\[([^\]]*)\]: (\d+)$', stdout, re.M)}


def per_tid(threads, launches):
    """Check: @[tid] counted LAUNCHES for each of THREADS tids."""
    def check(p):
        c = keyed_counts(p.stdout)
        good = c == {str(i): launches for i in range(threads)}
        return good, f'exit {p.returncode}, {len(c)} keys (want {threads}), ' \
                     f'{sum(v != launches for v in c.values())} wrong counts'
    return check


def two_contexts(p):
    """Check: multi_ctx's scale<<<2, 128>>> once in each of two contexts, merged."""
    c = keyed_counts(p.stdout)
    gpus = re.search(r'devices (\d)', p.stdout)
    return c == {str(i): 2 for i in range(256)}, \
        f'{len(c)} keys, values {set(c.values())}, GPUs used: {gpus.group(1) if gpus else "?"}'


def gpubt_cases(a, plain):
    b = a.bin

    gpubt_case(a, 'gpubt: mission example @[tid] = count() on vectorAdd x3',
               'gpu:kretprobe:vectorAdd < @[tid] = count(); >', f'{b}/vectorAdd 50000 3',
               per_tid(50176, 3), plain['vectorAdd'])
    gpubt_case(a, 'gpubt: SASS-only vectorAdd', 'gpu:kretprobe:vectorAdd < @[tid] = count(); >',
               f'{b}/vectorAdd_sass 50000 2', per_tid(50176, 2), plain['vectorAdd_sass'])
    gpubt_case(a, 'gpubt: PTX-only vectorAdd (JIT), kprobe',
               'gpu:kprobe:vectorAdd < @[tid] = count(); >', f'{b}/vectorAdd_ptx 50000 2',
               per_tid(50176, 2), plain['vectorAdd_ptx'])

    def loops(p):  # issue 29: per thread, $r.a = tid % 3 .. 4 is 4 - $r.a passes; while: 3
        c = keyed_counts(p.stdout)
        want = {str(k): 3 * (4 - k) * len(range(k, 50176, 3)) for k in range(3)}
        want['7'] = 3 * 3 * 50176
        return c == want, f'exit {p.returncode}, {c} (want {want})'
    gpubt_case(a, 'gpubt: loops, lets and records on vectorAdd x3',
               'gpu:kretprobe:vectorAdd { $r = (a = tid % 3, b = 2); let $n = $r.b + 2; '
               'for $i : $r.a .. $n { @[$r.a] = count(); } $j = 0; while ($j < 10) { $j++; '
               'if ($j == 2) { continue; } if ($j == 5) { break; } @[7] = count(); } }',
               f'{b}/vectorAdd 50000 3', loops, plain['vectorAdd'])

    def repeating_and_cached(p):  # issue 25 item 3: every path of a keyed update, exact
        rows = {(m, k): int(v) for m, k, v in
                re.findall(r'^@(\w*)\[([^\]]*)\]: (\d+)$', p.stdout, re.M)}
        name = next((k for m, k in rows if m == '' and k.startswith('vectorAdd')), None)
        want = {('', name): 3 * 50176, ('m', name): 50175, ('g', '196'): 3 * 50176,
                **{('t', str(k)): 3 * len(range(k, 50176, 1024)) for k in range(1024)},
                **{('b', str(k)): 3 * 256 for k in range(196)}}
        bad = {k: (rows.get(k), v) for k, v in want.items() if rows.get(k) != v}
        return p.returncode == 0 and name and rows == want, \
            f'exit {p.returncode}, {len(rows)} rows (want {len(want)}), wrong {list(bad.items())[:4]}'
    for backend in ('ptx', 'sass'):
        gpubt_case(a, f'gpubt: repeating keys and cached launch-uniform slots x3 ({backend})',
                   'gpu:kretprobe:vectorAdd { @[kernel] = count(); @t[tid % 1024] = count(); '
                   '@b[bid_x] = count(); @g[gdim_x] = count(); @m[kernel] = max(tid); }',
                   f'{b}/vectorAdd 50000 3', repeating_and_cached, plain['vectorAdd'],
                   opts=(f'--gpu-backend={backend}',))

    def grid(p):
        c = keyed_counts(p.stdout)
        want = {f'{x}, {y}': 64 for x in range(4) for y in range(3)}
        return c == want, f'{c}'
    gpubt_case(a, 'gpubt: grid3d @[bid_x, bid_y] = count()',
               'gpu:kretprobe:grid3d < @[bid_x, bid_y] = count(); >', f'{b}/grid3d', grid,
               plain['grid3d'])

    def threads(p):
        c = keyed_counts(p.stdout)
        want = {f'{x}, {y}, {z}': 12 for x in range(8) for y in range(4) for z in range(2)}
        return c == want, f'{len(c)} keys'
    gpubt_case(a, 'gpubt: grid3d @[tid_x, tid_y, tid_z] = count()',
               'gpu:kretprobe:grid3d < @[tid_x, tid_y, tid_z] = count(); >', f'{b}/grid3d',
               threads, plain['grid3d'])
    def long_names(p):  # two kernels equal for 80 characters: two keys, the legend names them
        c = keyed_counts(p.stdout)
        counts = sorted(c.values())
        full = re.findall(r'^  (\S+~[0-9a-f]{12}) = (\S+)$', p.stderr, re.M)
        ok = (p.returncode == 0 and counts == [3 * 64, 5 * 64] and
              all(len(k) == 63 for k in c) and sorted(s for s, _ in full) == sorted(c) and
              {f[-1] for _, f in full} == {'A', 'B'})
        return ok, f'exit {p.returncode}, keys {c}, legend {full}'
    gpubt_case(a, 'gpubt: kernels named alike past 63 characters stay apart',
               'gpu:kprobe:sm90_* { @[kernel] = count(); }', f'{b}/long_names', long_names)
    gpubt_case(a, 'gpubt: grid3d tid covers 0..767',
               'gpu:kretprobe:grid3d < @[tid] = count(); >', f'{b}/grid3d', per_tid(768, 1),
               plain['grid3d'])

    def dims(p):
        c = keyed_counts(p.stdout)
        return c == {'8, 4, 2, 4, 3': 768}, f'{c}'
    gpubt_case(a, 'gpubt: grid3d bdim/gdim',
               'gpu:kretprobe:grid3d < @[bdim_x, bdim_y, bdim_z, gdim_x, gdim_y] = count(); >',
               f'{b}/grid3d', dims, plain['grid3d'])

    gpubt_case(a, 'gpubt: two CUDA contexts (one per GPU where there are two) merged',
               'gpu:kretprobe:scale < @[tid] = count(); >', f'{b}/multi_ctx {b}/scale.cubin',
               two_contexts, plain['multi_ctx'])

    gpubt_case(a, 'gpubt: two CUDA processes under one -c (results merged)',
               'gpu:kretprobe:vectorAdd < @[tid] = count(); >',
               f"/bin/sh -c '{b}/vectorAdd 50000 1; {b}/vectorAdd 50000 2'", per_tid(50176, 3))
    gpubt_case(a, 'gpubt: kernel launched only from a CUDA graph',
               'gpu:kretprobe:graphAdd < @[tid] = count(); >', f'{b}/graph_add',
               per_tid(4096, 3), plain['graph_add'])

    def printf(p):
        lines = [l for l in p.stdout.splitlines() if l.startswith('tid ')]
        want = ['tid 0 bid 0,0', 'tid 1 bid 0,0', 'tid 2 bid 0,0']
        return sorted(lines) == want, f'{lines}'
    gpubt_case(a, 'gpubt: printf from the GPU',
               'gpu:kretprobe:grid3d /tid < 3/ < printf("tid %d bid %d,%d\\n", tid, bid_x, bid_y); >',
               f'{b}/grid3d', printf, plain['grid3d'])

    def mixed(p):
        launches = re.search(r'^@launches: (\d+)$', p.stdout, re.M)
        threads = re.search(r'^@threads: (\d+)$', p.stdout, re.M)
        ok = bool(launches and threads) and launches.group(1) == '3' and \
            threads.group(1) == str(50176 * 3)
        return ok, f'{launches and launches.group(0)} {threads and threads.group(0)}'
    gpubt_case(a, 'gpubt: host uprobe + gpu probe together (needs BPF on this machine)',
               'uprobe:cudart:cudaLaunchKernel { @launches = count(); } '
               'gpu:kretprobe:vectorAdd < @threads = count(); >', f'{b}/vectorAdd 50000 3',
               mixed, plain['vectorAdd'])

    def many_printfs(p):
        lines = sum(1 for l in p.stdout.splitlines() if l.startswith('t '))
        lost = re.search(r'Lost (\d+)', p.stdout + p.stderr)
        return lines == 20224 * 20 and not lost, f'{lines} lines (want {20224 * 20}), ' \
            f'{lost.group(0) if lost else "none lost"}'
    gpubt_case(a, 'gpubt: 404k GPU printfs over 20 launches (13 MB > the 1 MB ring)',
               'gpu:kretprobe:vectorAdd < printf("t %d\\n", tid); >', f'{b}/vectorAdd 20000 20',
               many_printfs)

    def two_probes(p):
        lines = [l for l in p.stdout.splitlines() if l.startswith('gpu tid')]
        launches = re.search(r'^@launches: (\d+)$', p.stdout, re.M)
        threads = re.search(r'^@threads: (\d+)$', p.stdout, re.M)
        ok = lines == ['gpu tid 7'] * 3 and bool(launches and threads) and \
            launches.group(1) == '3' and threads.group(1) == str(50176 * 3)
        return ok, f'{lines} {launches and launches.group(0)} {threads and threads.group(0)}'
    gpubt_case(a, 'gpubt: uprobe + two gpu probes on one kernel (count, printf)',
               'uprobe:cudart:cudaLaunchKernel { @launches = count(); } '
               'gpu:kretprobe:vectorAdd < @threads = count(); > '
               'gpu:kretprobe:vectorAdd /tid == 7/ < printf("gpu tid %d\\n", tid); >',
               f'{b}/vectorAdd 50000 3', two_probes, plain['vectorAdd'])

    def nomatch(p):
        # exit 4: gpu probes were asked for and none ran (runtime/run/exit_codes.h)
        return p.returncode == 4 and 'noSuchKernel' in p.stderr, f'exit {p.returncode}'
    gpubt_case(a, 'gpubt: kernel matching nothing', 'gpu:kretprobe:noSuchKernel < @ = count(); >',
               f'{b}/vectorAdd 50000 1', nomatch, plain['vectorAdd'])

    def did_you_mean(p):
        # The agent sends the kernels the program loaded when a probe matched none (issue 31).
        hint = "gpu:kretprobe:vectorAd: no kernel launch matched 'vectorAd' (did you mean " \
               "'vectorAdd'?)"
        return p.returncode == 4 and hint in p.stderr, f'exit {p.returncode}'
    for prog in ('vectorAdd', 'vectorAdd_ptx'):
        gpubt_case(a, f'gpubt: a misspelt kernel gets did-you-mean ({prog})',
                   'gpu:kretprobe:vectorAd < @ = count(); >', f'{b}/{prog} 50000 1',
                   did_you_mean, plain[prog])
    if a.torch:
        def gemm(p):
            c = re.search(r'^@: (\d+)$', p.stdout, re.M)
            return bool(c) and int(c.group(1)) > 0, f'{c.group(0) if c else p.stdout[-200:]}'
        gpubt_case(a, 'gpubt: PyTorch matmul gpu:kretprobe:*gemm*',
                   'gpu:kretprobe:*gemm* < @ = count(); >',
                   f'python3 {a.src}/tests/gpu/torch_matmul.py', gemm, plain.get('torch'))


# The agent's -v line, once per traced kernel at its first traced launch ("(set up at load)" when
# the module's load had set it up).
BACKEND_LINE = re.compile(r'^gpubt: kernel (.+): (ptx|sass) backend, probe mask (?:0x[0-9a-f]+|0)'
                          r'(?: \(set up at load\))?$', re.M)


def backends(stderr, kernel):
    """Backend of each kernel whose demangled signature is KERNEL or KERNEL(...)."""
    return {m.group(1): m.group(2) for m in BACKEND_LINE.finditer(stderr)
            if m.group(1) == kernel or m.group(1).startswith(kernel + '(')}


def total_count(want):
    """Check: the unkeyed @ = count() printed WANT."""
    def check(p):
        c = re.search(r'^@: (\d+)$', p.stdout, re.M)
        return bool(c) and int(c.group(1)) == want, \
            f'exit {p.returncode}, {c.group(0) if c else "no @ line"} (want {want})'
    return check


def backend_case(a, name, backend, kernel, want, script, command, check, plain):
    """A gpubt case under --gpu-backend=BACKEND -v whose KERNEL must report backend WANT."""
    def checked(p):
        ok, detail = check(p)
        got = backends(p.stderr, kernel)
        good = bool(got) and set(got.values()) == {want}
        return ok and good, f'{detail}; backends {got or "none reported"} (want {want})'
    gpubt_case(a, name, script, command, checked, plain,
               opts=(f'--gpu-backend={backend}', '-v'))


def backend_cases(a, plain):
    """Issue 5: the PTX backend (module image replaced at load) on every way a kernel gets loaded
    and launched, the SASS backend forced, and auto's choice."""
    b = a.bin
    tid_count = 'gpu:kretprobe:{} < @[tid] = count(); >'
    backend_case(a, 'gpubt ptx: mission example @[tid] = count() on vectorAdd x3 (static cudart)',
                 'ptx', 'vectorAdd', 'ptx', tid_count.format('vectorAdd'),
                 f'{b}/vectorAdd 50000 3', per_tid(50176, 3), plain['vectorAdd'])
    backend_case(a, 'gpubt ptx: @ = count() on vectorAdd = threads x launches', 'ptx',
                 'vectorAdd', 'ptx', 'gpu:kretprobe:vectorAdd < @ = count(); >',
                 f'{b}/vectorAdd 50000 3', total_count(50176 * 3), plain['vectorAdd'])
    backend_case(a, 'gpubt ptx: kprobe (kernel entry) @ = count() on vectorAdd', 'ptx',
                 'vectorAdd', 'ptx', 'gpu:kprobe:vectorAdd < @ = count(); >',
                 f'{b}/vectorAdd 50000 3', total_count(50176 * 3), plain['vectorAdd'])
    backend_case(a, 'gpubt ptx: shared-cudart vectorAdd', 'ptx', 'vectorAdd', 'ptx',
                 tid_count.format('vectorAdd'), f'{b}/vectorAdd_shared 50000 3',
                 per_tid(50176, 3), plain['vectorAdd_shared'])
    backend_case(a, 'gpubt ptx: nvrtc PTX loaded with cuModuleLoadData (saxpy)', 'ptx', 'saxpy',
                 'ptx', tid_count.format('saxpy'), f'{b}/nvrtc_module 50000 3 data',
                 per_tid(50176, 3), plain['nvrtc_module'])
    backend_case(a, 'gpubt ptx: nvrtc PTX loaded with cuModuleLoadDataEx (saxpy)', 'ptx', 'saxpy',
                 'ptx', tid_count.format('saxpy'), f'{b}/nvrtc_module 50000 3 ex',
                 per_tid(50176, 3), plain['nvrtc_module_ex'])
    backend_case(a, 'gpubt ptx: CUDA graphs, stream-captured and built (capAdd x9)', 'ptx',
                 'capAdd', 'ptx', tid_count.format('capAdd'), f'{b}/graph_capture',
                 per_tid(4096, 9), plain['graph_capture'])
    backend_case(a, 'gpubt ptx: __device__ globals written by cudaMemcpyToSymbol', 'ptx',
                 'scaleByGlobal', 'ptx', tid_count.format('scaleByGlobal'), f'{b}/device_global',
                 per_tid(50176, 3), plain['device_global'])
    backend_case(a, 'gpubt ptx: cudaLaunchKernelEx, cuLaunchKernelEx, cooperative (exAdd x3)',
                 'ptx', 'exAdd', 'ptx', tid_count.format('exAdd'), f'{b}/launch_ex',
                 per_tid(4096, 3), plain['launch_ex'])
    backend_case(a, 'gpubt ptx: cooperative launch with a grid sync (coopShift)', 'ptx',
                 'coopShift', 'ptx', tid_count.format('coopShift'), f'{b}/launch_ex',
                 per_tid(4096, 1), plain['launch_ex'])
    backend_case(a, 'gpubt ptx: two CUDA contexts (two GPUs where present), PTX module file',
                 'ptx', 'scale', 'ptx', tid_count.format('scale'),
                 f'{b}/multi_ctx {b}/scale.ptx', two_contexts, plain['multi_ctx_ptx'])
    backend_case(a, 'gpubt sass: forced on vectorAdd (PTX+SASS build)', 'sass', 'vectorAdd',
                 'sass', tid_count.format('vectorAdd'), f'{b}/vectorAdd 50000 3',
                 per_tid(50176, 3), plain['vectorAdd'])
    backend_case(a, 'gpubt auto: SASS-only vectorAdd_sass -> sass', 'auto', 'vectorAdd', 'sass',
                 tid_count.format('vectorAdd'), f'{b}/vectorAdd_sass 50000 3',
                 per_tid(50176, 3), plain['vectorAdd_sass'])
    backend_case(a, 'gpubt auto: PTX-only vectorAdd_ptx -> ptx', 'auto', 'vectorAdd', 'ptx',
                 tid_count.format('vectorAdd'), f'{b}/vectorAdd_ptx 50000 2',
                 per_tid(50176, 2), plain['vectorAdd_ptx'])

    # PTX forced where there is none: the program runs uninstrumented and gpubt says so (no -v,
    # so the mention is the warning, not the verbose log).
    def uninstrumented(p):
        return p.returncode == 4 and 'gpubt' in p.stderr and ': ptx backend' not in p.stderr, \
            f'exit {p.returncode}'
    gpubt_case(a, 'gpubt ptx: forced on SASS-only vectorAdd_sass -> uninstrumented, a warning',
               tid_count.format('vectorAdd'), f'{b}/vectorAdd_sass 50000 3', uninstrumented,
               plain['vectorAdd_sass'], opts=('--gpu-backend=ptx',))


def counted_baseline(a, plain):
    """vectorAdd_counted (the benchmark's hand-written counting) counts exactly and computes
    what vectorAdd does, in each variant."""
    details, ok = [], True
    for variant, want in [('none', 0), ('count', 50176 * 3), ('tid1024', 50176 * 3),
                          ('hist', 50176 * 3), ('count_sm', 50176 * 3), ('bid', 50176 * 3)]:
        p, _ = run([f'{a.bin}/vectorAdd_counted', '50000', '3', variant])
        m = re.search(r'counted (\d+)', p.stdout)
        got = int(m.group(1)) if m else None
        ok &= p.returncode == 0 and got == want and checksum(p.stdout) == plain['vectorAdd']
        details.append(f'{variant} {got} (want {want}) checksum {checksum(p.stdout)}')
    row('plain run vectorAdd_counted (hand-written counting)', ok, ', '.join(details))


def gpubt_timings(a):
    """bench/gpu: the issue's benchmark, through gpubt: vectorAdd over 2^26 floats and a cuBLAS
    4096^2 GEMM, plain vs gpu:kretprobe scripts. Prints TIMING lines and a markdown table."""
    env = dict(os.environ)
    env['GPUBT_AGENT_PATH'] = a.agent
    scripts = [('{ } (empty)', ''), ('@ = count()', '@ = count();'),
               ('@[tid % 1024] = count()', '@[tid % 1024] = count();'),
               ('@h = hist(clock)', '@h = hist(clock);')]
    table = []
    for label, prog, pattern, metric in [
            ('vectorAdd 2^26 x20', f'{a.bin}/vectorAdd {1 << 26} 21', 'vectorAdd', 'kernel_us'),
            ('cuBLAS 4096^2 fp32 GEMM x20',
             f'python3 {a.src}/tests/gpu/torch_matmul.py --bench 20', '*gemm*', 'gemm_ms')]:
        if 'torch' in prog and not a.torch:
            continue
        p, _ = run(prog.split())
        m = re.search(metric + r' ([\d.]+)', p.stdout)
        base = float(m.group(1)) if m else None
        table.append((label, 'plain', base, 1.0))
        for name, body in scripts:
            p, secs = run([a.gpubt, '-e', f'gpu:kretprobe:{pattern} < {body} >', '-c', prog],
                          env=env, timeout=600)
            m = re.search(metric + r' ([\d.]+)', p.stdout)
            v = float(m.group(1)) if m else None
            ratio = v / base if v and base else None
            table.append((label, name, v, ratio))
            print(f'TIMING {label} {name}: {v} {metric} ({ratio and f"{ratio:.2f}x"}) '
                  f'rc={p.returncode} {p.stderr.strip()[-200:]!r}', flush=True)
    print('\n| workload | script | time | vs plain |\n|---|---|---|---|')
    for label, name, v, ratio in table:
        print(f'| {label} | {name} | {v} | {f"{ratio:.2f}x" if ratio else "-"} |')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bin', required=True)
    ap.add_argument('--agent', required=True)
    ap.add_argument('--selftest-cubin', required=True)
    ap.add_argument('--gpubt')
    ap.add_argument('--src', default=os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    ap.add_argument('--torch', action='store_true')
    ap.add_argument('--timings', action='store_true')
    a = ap.parse_args()
    plain = {}
    for key, prog, args in [
            ('vectorAdd', 'vectorAdd', ['50000', '3']),
            ('vectorAdd_sass', 'vectorAdd_sass', ['50000', '3']),
            ('vectorAdd_ptx', 'vectorAdd_ptx', ['50000', '2']), ('grid3d', 'grid3d', []),
            ('multi_ctx', 'multi_ctx', [f'{a.bin}/scale.cubin']), ('graph_add', 'graph_add', []),
            ('vectorAdd_shared', 'vectorAdd_shared', ['50000', '3']),
            ('nvrtc_module', 'nvrtc_module', ['50000', '3', 'data']),
            ('nvrtc_module_ex', 'nvrtc_module', ['50000', '3', 'ex']),
            ('graph_capture', 'graph_capture', []), ('device_global', 'device_global', []),
            ('launch_ex', 'launch_ex', []),
            ('multi_ctx_ptx', 'multi_ctx', [f'{a.bin}/scale.ptx'])]:
        p, _ = run([f'{a.bin}/{prog}'] + args)
        plain[key] = checksum(p.stdout)
        row(f'plain run {key}', p.returncode == 0 and plain[key] is not None,
            p.stdout.strip() + p.stderr.strip()[-200:])
    counted_baseline(a, plain)
    if a.torch:
        p, _ = run(['python3', f'{a.src}/tests/gpu/torch_matmul.py'])
        plain['torch'] = checksum(p.stdout)
        row('plain run torch_matmul.py', p.returncode == 0 and plain['torch'] is not None,
            p.stdout.strip() + p.stderr.strip()[-200:])
    with tempfile.TemporaryDirectory() as tmp:
        agent_cases(a, tmp, plain)
        if a.timings:
            agent_timings(a, tmp)
    issue6_cases(a, plain, gpubt_case, row)
    launch_timer_cases(a, row)
    if a.gpubt:
        gpubt_cases(a, plain)
        backend_cases(a, plain)
        hang_cases(a, row)
        cupti_cases(a, row)
        xid_case(a, row)
        block_cases(a, row)
        mem_access_cases(a, row)
        if a.timings:
            gpubt_timings(a)
    else:
        row('gpubt end to end', None, 'no gpubt binary given')
    print('\n| case | result | detail |\n|---|---|---|')
    for name, status, detail in rows:
        print(f'| {name} | {status} | {detail[:160]} |')
    failed = sum(s == 'FAIL' for _, s, _ in rows)
    print(f'\n{len(rows) - failed}/{len(rows)} not failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
