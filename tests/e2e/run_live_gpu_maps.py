#!/usr/bin/env python3
"""GPU maps while the program runs (issue 26), on a real Vulkan program under lavapipe with gpubt's
layer: interval's print() of a map only gpu probes update grows between reads and its last read
is no more than the exit value, which is exact; --metrics serves it (promtool accepts the
exposition) and a real Prometheus server scraping gpubt sees its samples rise. Exits 77 (skip)
when the Vulkan program or layer, promtool or prometheus is missing."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_metrics import (Failures, free_port, get, prometheus_scraping, query,  # noqa: E402
                         samples, stop, wait_for)

GPU_COUNT = 'gpu:kprobe:main /tid == 0/ { @launches = count(); @by_parity[bid_x % 2] = count(); }'


def program_env(waits, pace_ms):
    return dict(os.environ, VK_VECTOR_ADD_WAITS=str(waits), VK_VECTOR_ADD_PACE_MS=str(pace_ms))


def check_interval(f, gpubt, program):
    """200 dispatches 50 ms apart (10 s, longer on a loaded machine), read every 500 ms."""
    r = subprocess.run([gpubt, "-e", GPU_COUNT + " interval:ms:500 { print(@launches); }",
                        "-c", f"{program} 4096 1"], env=program_env(200, 50),
                       capture_output=True, text=True, timeout=300)
    values = [int(v) for v in re.findall(r"^@launches: (\d+)$", r.stdout, re.M)]
    live, final = values[:-1], values[-1] if values else None
    f.check(r.returncode == 0 and final == 201,
            "the exit value is exact: 201 dispatches (the first and 200 more)",
            f"rc {r.returncode} {values}\n{r.stderr[-2000:]}")
    f.check(len(live) >= 3 and all(a <= b for a, b in zip(live, live[1:])) and
            len(set(live)) >= 3 and live[-1] <= (final or 0),
            "interval reads grow while the program runs and never pass the exit value",
            str(values))


def check_clear(f, gpubt, program):
    """interval's print() then clear() of a GPU count: the GPU's values at the clear become the
    base later reads subtract, so every dispatch is counted exactly once, the exit's print too."""
    r = subprocess.run([gpubt, "-e", GPU_COUNT + " interval:ms:500 { print(@launches); "
                        "clear(@launches); zero(@by_parity); }", "-c", f"{program} 4096 1"],
                       env=program_env(200, 20), capture_output=True, text=True, timeout=300)
    values = [int(v) for v in re.findall(r"^@launches: (\d+)$", r.stdout, re.M)]
    parity = [int(v) for v in re.findall(r"^@by_parity\[\d+\]: (\d+)$", r.stdout, re.M)]
    f.check(r.returncode == 0 and len(values) >= 3 and sum(values) == 201 and
            sum(parity) <= values[-1],
            "clear() from interval: the reads and the exit value add up to the 201 dispatches",
            f"rc {r.returncode} {values} {parity}\n{r.stderr[-2000:]}")


def check_host_reads(f, gpubt, program):
    """Host expressions over the GPU's maps (gpubt copies them into the BPF maps at each live copy
    and before END): interval's reads of the count and of a for loop's sum over the keyed map grow
    and never pass the 201 dispatches; END's reads are exact."""
    script = (GPU_COUNT + ' interval:ms:500 { $s = (uint64)0; for ($kv : @by_parity) { '
              '$s += (uint64)$kv.1; } printf("read %d %d\\n", (int64)@launches, $s); } '
              'END { $s = (uint64)0; for ($kv : @by_parity) { $s += (uint64)$kv.1; } '
              'printf("end %d %d\\n", (int64)@launches, $s); }')
    r = subprocess.run([gpubt, "-e", script, "-c", f"{program} 4096 1"],
                       env=program_env(200, 50), capture_output=True, text=True, timeout=300)
    reads = [(int(a), int(b)) for a, b in re.findall(r"^read (\d+) (\d+)$", r.stdout, re.M)]
    end = re.findall(r"^end (\d+) (\d+)$", r.stdout, re.M)
    counts = [a for a, _ in reads]
    f.check(r.returncode == 0 and end == [("201", "201")],
            "END reads the GPU's count and loops over its keyed count: both the 201 dispatches",
            f"rc {r.returncode} {end}\n{r.stdout[-1000:]}\n{r.stderr[-2000:]}")
    f.check(len(counts) >= 3 and all(a <= b for a, b in zip(counts, counts[1:])) and
            len(set(counts)) >= 3 and counts[-1] <= 201 and all(b <= 201 for _, b in reads),
            "interval's host reads of the GPU's maps grow while the program runs", str(reads))


def check_metrics(f, gpubt, program, promtool, prometheus, tmp):
    port = free_port()
    target = f"127.0.0.1:{port}"
    g = subprocess.Popen([gpubt, "--metrics", target, "-e", GPU_COUNT, "-c", f"{program} 4096 1"],
                         env=program_env(100000, 20), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    url = f"http://{target}/metrics"
    try:
        first = wait_for(lambda: samples(get(url)[2]).get("gpubt_launches_total", 0) > 0, 60)
        f.check(bool(first), "a scrape shows the GPU map while the program runs")
        if not first:
            return
        text = get(url)[2]
        r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                           text=True)
        f.check(r.returncode == 0, "promtool check metrics accepts it", r.stdout + r.stderr + text)
        a = samples(text).get("gpubt_launches_total", 0)
        later = wait_for(lambda: samples(get(url)[2]).get("gpubt_launches_total", 0) > a, 30)
        f.check(bool(later), "a later scrape shows more launches", text)
        f.check(any(k.startswith("gpubt_by_parity_total{") for k in samples(text)),
                "a keyed GPU map is a labelled series", text)
        check_prometheus_sees_it_rise(f, prometheus, target, tmp)
    finally:
        stop(g, timeout=60)


def check_prometheus_sees_it_rise(f, prometheus, target, tmp):
    with prometheus_scraping(f, prometheus, target, tmp) as base:
        if not base:
            return
        rising = wait_for(lambda: [r for r in query(base, "increase(gpubt_launches_total[10s])")
                                   if float(r["value"][1]) > 0], 40)
        f.check(bool(rising), "Prometheus sees the GPU map's samples rise",
                open(os.path.join(tmp, "prometheus.log")).read()[-1000:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpubt", required=True)
    ap.add_argument("--programs", required=True)
    args = ap.parse_args()
    program = os.path.join(args.programs, "vk_vector_add")
    promtool, prometheus = shutil.which("promtool"), shutil.which("prometheus")
    if not os.access(program, os.X_OK) or not promtool or not prometheus:
        print("[SKIP] needs tests/programs' vk_vector_add (Vulkan), promtool and prometheus")
        return 77
    f = Failures()
    check_interval(f, args.gpubt, program)
    check_clear(f, args.gpubt, program)
    check_host_reads(f, args.gpubt, program)
    with tempfile.TemporaryDirectory(prefix="gpubt-live-") as tmp:
        check_metrics(f, args.gpubt, program, promtool, prometheus, tmp)
    print(f"{f.count} failed" if f.count else "all passed")
    return 1 if f.count else 0


if __name__ == "__main__":
    sys.exit(main())
