#!/usr/bin/env python3
"""--metrics against Prometheus' own tools (issue 16): gpubt traces a real process with real BPF
programs and serves /metrics; `promtool check metrics` accepts what it serves, and a real
Prometheus server (temporary config and storage, free ports, 1 s scrapes) scrapes it and answers
queries about the values. Exits 77 (ctest's skip) only when promtool or prometheus is missing."""
import argparse
import contextlib
import itertools
import json
import lzma
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

SCRIPT = """uprobe:{programs}/spin:tick {
  @ticks = count();
  @by_rest[arg0 % 3] = count();
  @comm_parity[comm, arg0 % 2] = count();
  @arg = hist(arg0);
  @ones = lhist(arg0 % 100, 0, 100, 10);
  @spread = stats(arg0 % 10);
  @last = max(arg0);
  @mean_by_rest[arg0 % 3] = avg(arg0);
  @down = sum(-1);
  @who[arg0 % 2] = comm;
}"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode()


def wait_for(pred, timeout):
    end = time.time() + timeout
    while time.time() < end:
        try:
            v = pred()
            if v:
                return v
        except OSError:
            pass
        time.sleep(0.2)
    return None


def samples(text):
    """{'name{labels}': value} of an exposition text."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


class Failures:
    def __init__(self):
        self.count = 0

    def check(self, ok, what, detail=""):
        print(("[PASS] " if ok else "[FAIL] ") + what + ("" if ok else f"\n  {detail}"))
        self.count += 0 if ok else 1
        return ok


def check_exposition(f, text, promtool):
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    f.check(r.returncode == 0, "promtool check metrics accepts gpubt's /metrics",
            r.stdout + r.stderr + "\n" + text)
    s = samples(text)
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    f.check(types.get("gpubt_ticks_total") == "counter" and s.get("gpubt_ticks_total", 0) > 0,
            "count() is a counter with the ticks so far", text)
    f.check(types.get("gpubt_arg") == "histogram" and types.get("gpubt_ones") == "histogram",
            "hist() and lhist() are histograms")
    f.check(s.get('gpubt_arg_bucket{le="+Inf"}') == s.get("gpubt_arg_count") and
            s.get("gpubt_arg_count", 0) >= s.get("gpubt_ticks_total", 1) - 5,
            "the histogram's +Inf bucket and _count agree with the tick count", text)
    f.check(types.get("gpubt_spread") == "summary" and types.get("gpubt_spread_average") == "gauge",
            "stats() is a summary and an average gauge")
    f.check(types.get("gpubt_last") == "gauge", "max() is a gauge")
    f.check(types.get("gpubt_mean_by_rest") == "summary" and
            'gpubt_mean_by_rest_average{other="true"}' in s, "avg() is a summary, capped too", text)
    f.check(types.get("gpubt_down") == "gauge" and s.get("gpubt_down", 0) < 0,
            "a signed sum() is a gauge", text)
    f.check(s.get('gpubt_who{key="0",value="spin"}') == 1, "a string value is a label", text)
    f.check('gpubt_comm_parity_total{key0="spin",key1="0"}' in s,
            "a tuple key is key0, key1 labels", text)
    rest = [k for k in s if k.startswith("gpubt_by_rest_total")]
    f.check(len(rest) == 3 and 'gpubt_by_rest_total{other="true"}' in s,
            "--metrics-series 2 keeps two series and sums the third into other", str(rest))
    f.check(s.get("gpubt_attached_probes") == 1 and s.get("gpubt_attached_processes") == 1 and
            s.get("gpubt_lost_events_total") == 0, "health: probes, processes, lost events", text)


def start(gpubt, programs, script, extra=()):
    port = free_port()
    p = subprocess.Popen([gpubt, "--metrics", f"127.0.0.1:{port}", *extra, "-e", script, "-c",
                          f"{programs}/spin 60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, stdin=subprocess.DEVNULL)
    return p, f"http://127.0.0.1:{port}/metrics", port


def stop(p, timeout=20):
    """Ctrl-C; the output, and how long gpubt took to end (None: it did not)."""
    p.send_signal(signal.SIGINT)
    t0 = time.time()
    try:
        out, err = p.communicate(timeout=timeout)
        return out, err, time.time() - t0
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return out, err, None


def check_idle_and_slow_clients(f, gpubt, programs):
    """Issue 23 S3: 5 connections that send nothing and one that sends a byte a second hold up
    neither a scrape nor gpubt's end (the maps still print). Bounds are generous: a loaded
    2-CPU machine answers a scrape in well under a second."""
    p, url, port = start(gpubt, programs, f"uprobe:{programs}/spin:tick {{ @ticks = count(); }}")
    held = []
    stop_slow = threading.Event()

    def slowloris(s):
        # A request that never ends: a header line that grows a byte a second.
        data = itertools.chain(b"GET /metrics HTTP/1.1\r\nX-Slow: ", itertools.repeat(ord("a")))
        try:
            for b in data:
                if stop_slow.wait(1):
                    return
                s.send(bytes([b]))
        except OSError:
            pass  # gpubt closed it: its deadline passed

    try:
        f.check(bool(wait_for(lambda: get(url)[0] == 200, 15)), "slow clients: gpubt serves")
        # The slow one first: a server taking connections in turn is held by it for ever.
        held.append(socket.create_connection(("127.0.0.1", port)))
        threading.Thread(target=slowloris, args=(held[0],), daemon=True).start()
        held += [socket.create_connection(("127.0.0.1", port)) for _ in range(5)]
        time.sleep(1.5)  # the slow client has sent a byte or two (a wait for it, not a race)
        t0 = time.time()
        try:
            ok = get(url, timeout=10)[0] == 200
        except OSError as e:
            ok = False
        took = time.time() - t0
        f.check(ok and took < 5, "a scrape answers beside 5 idle clients and a slow one",
                f"{took:.1f} s")
    finally:
        out, err, took = stop(p)
        stop_slow.set()
        for s in held:
            s.close()
    f.check(took is not None and took < 10 and p.returncode == 0 and "@ticks: " in out,
            "gpubt ends at once on Ctrl-C with the maps printed while clients hang",
            f"took {took}, rc {p.returncode}\n{out}\n{err}")


def check_labels_stay_distinct(f, gpubt, programs, promtool):
    """A newline and the two characters \\n, byte 0xff and the four characters \\xff: four
    series that Prometheus keeps apart, and promtool accepts."""
    script = ('BEGIN { @k["c\\nd"] = count(); @k["c\\\\nd"] = count(); @k["e\\xff"] = count(); '
              '@k["e\\\\xff"] = count(); @k["e\\\\xff"] = count(); }')
    p, url, _ = start(gpubt, programs, script)
    try:
        text = wait_for(lambda: get(url)[2], 15) or ""
    finally:
        stop(p)
    series = {k: v for k, v in samples(text).items() if k.startswith("gpubt_k_total")}
    want = {r'gpubt_k_total{key="c\\nd"}': 1, r'gpubt_k_total{key="c\\\\nd"}': 1,
            r'gpubt_k_total{key="e\\xff"}': 1, r'gpubt_k_total{key="e\\\\xff"}': 2}
    f.check(series == want, "label values: four keys, four series", f"{series}\n{text}")
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    f.check(r.returncode == 0, "promtool accepts those labels", r.stdout + r.stderr)


def check_late_probe_names(f, gpubt, programs):
    """Probes attached when the traced program loads a library (dlopen) add probe names while
    the metrics thread reads them: a scrape shows the wildcard's expanded names, as the exit
    printout does (the scrape reads a copy taken under the lock that attaching holds)."""
    lib = f"{programs}/fake-cudart/libcudart.so.13"
    if not os.path.exists(lib):
        return
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    p = subprocess.Popen([gpubt, "--metrics", f"127.0.0.1:{port}", "-e",
                          "uprobe:cudart:cuda* { @[probe, func] = count(); }", "-c",
                          f"{programs}/dlopen_calls {lib} cudaMalloc 3 1 30"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL)
    want = 'gpubt_map_total{key0="uprobe:cudart:cudaMalloc",key1="cudaMalloc"}'
    text = wait_for(lambda: (lambda t: t if want in t else None)(get(url)[2]), 15)
    out, err, _ = stop(p)
    f.check(bool(text), "a scrape after a late attach names its probes", f"{out}\n{err}")


def check_running_kernel_age(f, gpubt, programs, promtool):
    """Issue 26: with gpu:hang, the agents watch their launches and a scrape shows each process's
    oldest running launch's age. The agent is tests/programs/cuda/fake_hang_agent.cpp (loaded by
    fake_cuda_init as the driver loads gpubt's): its oldest launch, reduce, began 5 s before its
    first look and runs on while FAKE_HANG_HOLD_S lasts."""
    port = free_port()
    env = dict(os.environ, GPUBT_AGENT_PATH=f"{programs}/fake-agent/libfake_hang_agent.so",
               GPUBT_VULKAN_LAYER_DIR="/nonexistent", FAKE_HANG_HOLD_S="30")
    p = subprocess.Popen([gpubt, "--metrics", f"127.0.0.1:{port}", "-e",
                          "gpu:hang:spin { @hung[kernel] = count(); }", "-c",
                          f"{programs}/fake_cuda_init"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}/metrics"
    name = "gpubt_gpu_oldest_running_seconds"
    ages = lambda: [v for k, v in samples(get(url)[2]).items() if k.startswith(name + "{")]
    try:
        first = wait_for(ages, 15)
        f.check(bool(first) and first[0] >= 5, "a scrape shows the oldest running launch's age",
                str(first))
        text = get(url)[2]
        r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                           text=True)
        f.check(r.returncode == 0, "promtool accepts the running kernel gauge", r.stdout + r.stderr)
        labels = re.findall(name + r'\{pid="(\d+)",kernel="([^"]*)"\}', text)
        f.check(len(labels) == 1 and labels[0][1] == "reduce",
                "one sample per process, labelled with its pid and the kernel's name", text)
        f.check(re.search(r"^# TYPE " + name + " gauge$", text, re.M) is not None,
                "the age is a gauge", text)
        later = wait_for(lambda: [a for a in ages() if first and a >= first[0] + 1], 10)
        f.check(bool(later), "the age grows between scrapes", f"{first} then {later}")
        # The agent's scripted looks take 6 s; the probe's map is served too.
        both = wait_for(lambda: samples(get(url)[2]).get('gpubt_hung_total{key="spin"}') == 2, 20)
        f.check(bool(both), "the gpu:hang probe's map is served as it fires", get(url)[2])
    finally:
        out, err, _ = stop(p)
    f.check("@hung[spin]: 2" in out, "the gpu:hang probe ran for both spin launches", out + err)


def query(base, expr):
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    _, _, body = get(url)
    data = json.loads(body)
    return data["data"]["result"] if data.get("status") == "success" else []


def prometheus_binary(path, work):
    """PATH (unpacked into WORK when it is xz'd, as gpu-pack.sh carries it to a GPU machine), else
    the prometheus on PATH; None without either."""
    if path and path.endswith(".xz") and os.path.exists(path):
        out = os.path.join(work, "prometheus")
        with lzma.open(path) as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.chmod(out, 0o755)
        return out
    return path if path and os.path.exists(path) else shutil.which("prometheus")


@contextlib.contextmanager
def prometheus_scraping(f, prometheus, target, tmp):
    """A real Prometheus server scraping TARGET every second; yields its base URL (None if it did
    not start, which F records), stops it after."""
    port = free_port()
    config = os.path.join(tmp, "prometheus.yml")
    with open(config, "w") as c:
        c.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: gpubt\n    static_configs:\n"
                f"      - targets: ['{target}']\n")
    log = open(os.path.join(tmp, "prometheus.log"), "w")
    p = subprocess.Popen([prometheus, f"--config.file={config}",
                          f"--storage.tsdb.path={os.path.join(tmp, 'data')}",
                          f"--web.listen-address=127.0.0.1:{port}"],
                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        ready = wait_for(lambda: get(base + "/-/ready")[0] == 200, 30)
        f.check(bool(ready), "a real Prometheus server starts", open(log.name).read()[-2000:])
        yield base if ready else None
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        log.close()


def check_prometheus(f, prometheus, target, tmp):
    with prometheus_scraping(f, prometheus, target, tmp) as base:
        if not base:
            return
        log = os.path.join(tmp, "prometheus.log")
        up = wait_for(lambda: [r for r in query(base, 'up{job="gpubt"}') if r["value"][1] == "1"],
                      20)
        f.check(bool(up), "Prometheus scrapes gpubt (up == 1)", open(log).read()[-2000:])
        ticks = wait_for(lambda: query(base, "gpubt_ticks_total"), 10)
        f.check(bool(ticks) and float(ticks[0]["value"][1]) > 0,
                "Prometheus has gpubt_ticks_total > 0", str(ticks))
        rate = wait_for(lambda: [r for r in query(base, "rate(gpubt_ticks_total[5s])")
                                 if float(r["value"][1]) > 0], 10)
        # spin ticks every 10 ms: about 100 a second, less under a loaded machine.
        f.check(bool(rate) and 10 < float(rate[0]["value"][1]) < 150,
                "rate(gpubt_ticks_total) is about spin's 100 ticks a second", str(rate))
        q = query(base, "histogram_quantile(0.5, gpubt_ones_bucket)")
        f.check(bool(q) and 0 <= float(q[0]["value"][1]) <= 100,
                "histogram_quantile over gpubt's lhist buckets is within its range", str(q))
        key = query(base, 'gpubt_comm_parity_total{key0="spin",key1="1"}')
        f.check(bool(key) and float(key[0]["value"][1]) > 0,
                "a query by key labels finds the series", str(key))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpubt", required=True)
    ap.add_argument("--programs", required=True)
    args = ap.parse_args()
    promtool, prometheus = shutil.which("promtool"), shutil.which("prometheus")
    if not promtool or not prometheus:
        print("[SKIP] promtool or prometheus is not installed (Debian: apt-get install prometheus)")
        return 77
    f = Failures()
    port = free_port()
    target = f"127.0.0.1:{port}"
    script = SCRIPT.replace("{programs}", args.programs)
    gpubt = subprocess.Popen([args.gpubt, "--metrics", target, "--metrics-series", "2", "-e", script,
                              "-c", f"{args.programs}/spin 60"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             stdin=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory(prefix="gpubt-metrics-") as tmp:
        try:
            url = f"http://{target}/metrics"
            # Enough ticks that @by_rest has all three keys.
            text = wait_for(lambda: samples(get(url)[2]).get("gpubt_ticks_total", 0) >= 10, 15)
            f.check(bool(text), "gpubt serves /metrics while tracing")
            if text:
                status, ctype, _ = get(url)
                f.check(status == 200 and ctype.startswith("text/plain; version=0.0.4"),
                        "the answer is Prometheus' text format", ctype)
                check_exposition(f, get(url)[2], promtool)
                check_prometheus(f, prometheus, target, tmp)
            try:
                get(f"http://{target}/nothing")
                f.check(False, "another path is 404")
            except urllib.error.HTTPError as e:
                f.check(e.code == 404, "another path is 404", str(e))
        finally:
            gpubt.send_signal(signal.SIGINT)
            try:
                out, err = gpubt.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                gpubt.kill()
                out, err = gpubt.communicate()
    f.check(gpubt.returncode == 0 and "@ticks: " in out,
            "gpubt ends on Ctrl-C with its usual output", f"rc {gpubt.returncode}\n{out}\n{err}")
    check_idle_and_slow_clients(f, args.gpubt, args.programs)
    check_labels_stay_distinct(f, args.gpubt, args.programs, promtool)
    check_late_probe_names(f, args.gpubt, args.programs)
    check_running_kernel_age(f, args.gpubt, args.programs, promtool)
    print(f"{f.count} failed" if f.count else "all passed")
    return 1 if f.count else 0


if __name__ == "__main__":
    sys.exit(main())
