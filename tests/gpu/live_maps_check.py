"""Issue 26 on a real PyTorch training run: a map only gpu probes update, read by interval's
print() and by --metrics scrapes while the job runs, grows between reads, never passes the exit
value, and the exit value equals the host's count of cuLaunchKernel* calls (the truth gpubt's
gpu probes do not produce). The job's printed losses equal its plain run's."""
import os, re, signal, socket, subprocess, threading, time, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = ('gpu:kprobe:* /tid == 0/ { @gpu = count(); } uprobe:cuda:cuLaunchKernel* '
          '{ @host = count(); } interval:ms:500 { print(@gpu); }')


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


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


def run(gpubt, env, timeout, steps=300):
    cmd = f'python3 {HERE}/ml/train_transformer.py --steps {steps}'
    plain = subprocess.run(['sh', '-c', cmd], env=env, capture_output=True, text=True,
                           timeout=timeout)
    port = free_port()
    p = subprocess.Popen([gpubt, '--metrics', f'127.0.0.1:{port}', '-e', SCRIPT, '-c', cmd],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    scrapes = []
    t = threading.Thread(target=scrape_until, args=(f'http://127.0.0.1:{port}/metrics', p, scrapes))
    t.start()
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    t.join()
    reads = [int(v) for v in re.findall(r'^@gpu: (\d+)$', out, re.M)]
    live, final = reads[:-1], reads[-1] if reads else -1
    host = re.search(r'^@host: (\d+)$', out, re.M)
    host = int(host.group(1)) if host else -2
    losses = lambda s: re.findall(r'^loss .*$', s, re.M)
    grow = lambda v: len(set(v)) >= 2 and all(a <= b for a, b in zip(v, v[1:]))
    ok = (p.returncode == 0 and final == host and grow(live) and live[-1] <= final and
          grow(scrapes) and scrapes[-1] <= final and losses(out) == losses(plain.stdout) and
          losses(out))
    return ok, (f'exit {p.returncode}; interval reads {live[:3]}..{live[-3:]} ({len(live)}), '
                f'exit {final}, host {host}; scrapes {scrapes[:2]}..{scrapes[-2:]} '
                f'({len(scrapes)}); losses equal {losses(out) == losses(plain.stdout)}'
                + ('' if ok else f' stderr {err.strip()[-600:]!r}'))
