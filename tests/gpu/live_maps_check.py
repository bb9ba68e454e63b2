"""Issue 26 on a real PyTorch training run: a map only gpu probes update, read by interval's
print() and by --metrics scrapes while the job runs, grows between reads, never passes the exit
value, and the exit value equals the host's count of cuLaunchKernel* calls (the truth gpubt's
gpu probes do not produce). The job's printed losses equal its plain run's. Given a Prometheus
server's binary (gpu-e2e.sh carries Debian's, xz'd), a real Prometheus scrapes gpubt every second
while the job runs and its queries of the GPU map rise (it parses each scrape: a malformed
exposition would leave no samples; promtool itself checks the same exposition code in CI)."""
import contextlib, os, re, subprocess, sys, tempfile, threading, time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'e2e'))
from run_metrics import (Failures, free_port, prometheus_binary, prometheus_scraping,  # noqa: E402
                         query)
SCRIPT = ('gpu:kprobe:* /tid == 0/ { @gpu = count(); } uprobe:cuda:cuLaunchKernel* '
          '{ @host = count(); } interval:ms:500 { print(@gpu); }')


def scrape_until(url, proc, values):
    while proc.poll() is None:
        try:
            text = urllib.request.urlopen(url, timeout=2).read().decode()
            m = re.search(r'^gpubt_gpu_total (\S+)$', text, re.M)
            if m:
                values.append(float(m.group(1)))
        except OSError:
            pass
        time.sleep(0.5)


def query_until(base, proc, values):
    """gpubt_gpu_total as Prometheus has it, every second while PROC runs."""
    while proc.poll() is None:
        try:
            for r in query(base, 'gpubt_gpu_total'):
                values.append(float(r['value'][1]))
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(1)


@contextlib.contextmanager
def prometheus_on(prometheus, target, work, failures):
    """A real Prometheus scraping TARGET (its base URL), or None without a binary."""
    binary = prometheus_binary(prometheus, work)
    if not binary:
        yield None
        return
    with prometheus_scraping(failures, binary, target, work) as base:
        yield base


def run(gpubt, env, timeout, steps=300, prometheus=None):
    cmd = f'python3 {HERE}/ml/train_transformer.py --steps {steps}'
    plain = subprocess.run(['sh', '-c', cmd], env=env, capture_output=True, text=True,
                           timeout=timeout)
    port = free_port()
    failures = Failures()
    queried = []
    with tempfile.TemporaryDirectory(prefix='gpubt-live-prom-') as work, \
            prometheus_on(prometheus, f'127.0.0.1:{port}', work, failures) as base:
        p = subprocess.Popen([gpubt, '--metrics', f'127.0.0.1:{port}', '-e', SCRIPT, '-c', cmd],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        scrapes = []
        threads = [threading.Thread(target=scrape_until,
                                    args=(f'http://127.0.0.1:{port}/metrics', p, scrapes))]
        if base:
            threads.append(threading.Thread(target=query_until, args=(base, p, queried)))
        for t in threads:
            t.start()
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        for t in threads:
            t.join()
    reads = [int(v) for v in re.findall(r'^@gpu: (\d+)$', out, re.M)]
    live, final = reads[:-1], reads[-1] if reads else -1
    host = re.search(r'^@host: (\d+)$', out, re.M)
    host = int(host.group(1)) if host else -2
    losses = lambda s: re.findall(r'^loss .*$', s, re.M)
    grow = lambda v: len(set(v)) >= 2 and all(a <= b for a, b in zip(v, v[1:]))
    # Prometheus: without a binary the row says so and does not pass (gpu-e2e.sh carries one).
    prom_ok = bool(base) and failures.count == 0 and grow(queried) and queried[-1] <= final
    ok = (p.returncode == 0 and final == host and grow(live) and live[-1] <= final and
          grow(scrapes) and scrapes[-1] <= final and losses(out) == losses(plain.stdout) and
          losses(out) and prom_ok)
    prom = (f'Prometheus queries {queried[:2]}..{queried[-2:]} ({len(queried)})' if base
            else f'no Prometheus ({prometheus or "none given"})')
    return ok, (f'exit {p.returncode}; interval reads {live[:3]}..{live[-3:]} ({len(live)}), '
                f'exit {final}, host {host}; scrapes {scrapes[:2]}..{scrapes[-2:]} '
                f'({len(scrapes)}); {prom}; losses equal {losses(out) == losses(plain.stdout)}'
                + ('' if ok else f' stderr {err.strip()[-600:]!r}'))
