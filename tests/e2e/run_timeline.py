#!/usr/bin/env python3
"""--timeline end to end: real BPF traces of the suite's programs with --timeline FILE, ended by
the program's end, exit(), Ctrl-C and SIGTERM. Each file is checked twice: structurally (JSON,
every span complete, counts as the program makes them) and by importing it into a real viewer,
speedscope (tests/e2e/timeline/speedscope_import.mjs), whose spans per track must match."""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
from case_list import case, run_cases


def run(ctx, args, timeout=30):
    return subprocess.run([ctx.gpubt] + args, capture_output=True, text=True, errors="replace",
                          stdin=subprocess.DEVNULL, timeout=timeout)


def load(path):
    """The trace, checked for what every gpubt trace must be."""
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    assert set(trace) == {"traceEvents", "displayTimeUnit", "otherData"}, sorted(trace)
    for e in trace["traceEvents"]:
        assert e["ph"] in ("X", "i", "M"), e  # spans are complete events: never a lone B or E
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
        if e["ph"] == "X":
            assert e["dur"] >= 0 and e["ts"] > 0, e
    assert not os.path.exists(path + ".tmp")
    return trace


def spans(trace, name=None):
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and name in (None, e["name"])]


def instants(trace):
    return [e for e in trace["traceEvents"] if e["ph"] == "i"]


def viewer(ctx, path):
    """speedscope's import of the file: {track name: {span name: spans}}; fails if it cannot.
    speedscope names a frame by the span's name and its args ('add {"retval":3}')."""
    p = subprocess.run(["node", os.path.join(HERE, "timeline", "speedscope_import.mjs"),
                        ctx.viewer, path], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"speedscope: {p.stdout[-500:]} {p.stderr[-500:]}"
    tracks = {}
    for prof in json.loads(p.stdout)["profiles"]:
        spans = tracks.setdefault(prof["name"], {})
        for frame, n in prof["frames"].items():
            name = frame.split(" {")[0]
            spans[name] = spans.get(name, 0) + n
    return tracks


def track(e):
    return f"pid {e['pid']}, tid {e['tid']}"


def expect_viewer_matches(ctx, path, trace):
    """Every span of the file is a frame of its track in speedscope."""
    want = {}
    for e in spans(trace):
        frames = want.setdefault(track(e), {})
        frames[e["name"]] = frames.get(e["name"], 0) + 1
    got = viewer(ctx, path)
    assert got == want, f"speedscope {got} != file {want}"


def tmpfile(name):
    return os.path.join(tempfile.mkdtemp(prefix="gpubt-timeline-"), name)


CALLS_SCRIPT = ("uprobe:{p}/calls:add {{ @n = count(); }} uretprobe:{p}/calls:add {{ @r = count(); }}"
                " uprobe:{p}/calls:tick {{ printf(\"tick %d\\n\", arg0); }}")


@case
def spans_and_printfs_when_the_program_ends(ctx):
    path = tmpfile("calls.json")
    r = run(ctx, ["--timeline", path, "-e", CALLS_SCRIPT.format(p=ctx.programs),
                  "-c", f"{ctx.programs}/calls 3"])
    assert r.returncode == 0, r.stderr
    assert "tick 2\n" in r.stdout and "@n: 30" in r.stdout, r.stdout  # the normal output as ever
    trace = load(path)
    adds = spans(trace, "add")
    assert len(adds) == 30, len(adds)
    # add(i, r) returns i + r: each span shows its call's retval.
    assert sorted(e["args"]["retval"] for e in adds) == sorted(i + r for r in range(3)
                                                               for i in range(10))
    ticks = instants(trace)
    assert [e["name"] for e in ticks] == ["tick 0", "tick 1", "tick 2"], ticks
    assert all(e["args"]["probe"].endswith("calls:tick") for e in ticks)
    assert {track(e) for e in adds + ticks} == {track(adds[0])}  # one thread, one track
    assert trace["otherData"]["dropped_events"] == 0
    expect_viewer_matches(ctx, path, trace)


@case
def exit_ends_the_trace(ctx):
    path = tmpfile("exit.json")
    prog = (f"uprobe:{ctx.programs}/calls:add {{}} uretprobe:{ctx.programs}/calls:add {{}} "
            f"uprobe:{ctx.programs}/calls:tick /arg0 == 1/ {{ exit(); }}")
    r = run(ctx, ["--timeline", path, "-e", prog, "-c", f"{ctx.programs}/calls 3"])
    assert r.returncode == 0, r.stderr
    trace = load(path)
    assert len(spans(trace, "add")) == 20  # two rounds of 10 before tick(1)
    expect_viewer_matches(ctx, path, trace)


def interrupted(ctx, sig):
    path = tmpfile("spin.json")
    prog = (f"uprobe:{ctx.programs}/spin:tick {{}} uretprobe:{ctx.programs}/spin:tick {{}}")
    p = subprocess.Popen([ctx.gpubt, "--timeline", path, "-e", prog, "-c",
                          f"{ctx.programs}/spin 20"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    assert line.startswith("Attaching"), line
    time.sleep(0.5)
    p.send_signal(sig)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 0, (p.returncode, err)
    trace = load(path)
    n = len(spans(trace, "tick"))
    assert 5 <= n <= 200, n  # a call every 10 ms for half a second
    expect_viewer_matches(ctx, path, trace)


@case
def ctrl_c_ends_the_trace(ctx):
    interrupted(ctx, signal.SIGINT)


@case
def sigterm_ends_the_trace(ctx):
    interrupted(ctx, signal.SIGTERM)


@case
def ring_keeps_the_newest_events(ctx):
    path = tmpfile("ring.json")
    r = run(ctx, ["--timeline", path, "--timeline-events", "7", "-e",
                  CALLS_SCRIPT.format(p=ctx.programs), "-c", f"{ctx.programs}/calls 3"])
    assert r.returncode == 0, r.stderr
    trace = load(path)
    kept = spans(trace) + instants(trace)
    assert len(kept) == 7, len(kept)
    assert trace["otherData"]["event_limit"] == 7
    assert trace["otherData"]["dropped_events"] == 33 - 7  # 30 spans and 3 printfs came
    # The newest: the last round's calls, and its tick.
    assert [e["name"] for e in instants(trace)] == ["tick 2"]
    expect_viewer_matches(ctx, path, trace)


@case
def cuda_api_spans_show_typed_args(ctx):
    binary = f"{ctx.programs}/cuda_calls_shared"
    if not os.access(binary, os.X_OK):
        return "SKIP"
    path = tmpfile("cuda.json")
    prog = ("uprobe:cudart:cudaMalloc {} uretprobe:cudart:cudaMalloc {} "
            "uprobe:cudart:cudaLaunchKernel {} uretprobe:cudart:cudaLaunchKernel {}")
    r = run(ctx, ["--timeline", path, "-e", prog, "-c", binary])
    assert r.returncode == 0, r.stderr
    trace = load(path)
    mallocs, launches = spans(trace, "cudaMalloc"), spans(trace, "cudaLaunchKernel")
    assert sorted(e["args"]["size"] for e in mallocs) == [1024] * 3 + [4096] * 2 + [1048576]
    assert {e["args"]["retval"] for e in mallocs + launches} == {"cudaErrorInsufficientDriver"}
    assert len(launches) == 4
    assert {(e["args"]["gridDim"], e["args"]["blockDim"]) for e in launches} == {
        ("(2, 1, 1)", "(128, 1, 1)")}, launches[0]
    assert set(launches[0]["args"]) == {"func", "gridDim", "blockDim", "args", "sharedMem",
                                        "stream", "retval"}, launches[0]["args"]
    expect_viewer_matches(ctx, path, trace)


@case
def gpu_only_script_without_an_agent_still_writes_the_file(ctx):
    """The gpu-only path (no BPF) ends through the same printout: the file is there and valid
    even when the probes could not be instrumented (no agent here: exit status 4)."""
    path = tmpfile("gpu.json")
    env = dict(os.environ, GPUBT_AGENT_PATH="/nonexistent/libgpubt_agent.so")
    p = subprocess.run([ctx.gpubt, "--timeline", path, "-e",
                        'gpu:kretprobe:vectorAdd { printf("%d\\n", tid); }', "-c",
                        f"{ctx.programs}/calls 1"], capture_output=True, text=True, timeout=30,
                       env=env, stdin=subprocess.DEVNULL)
    assert p.returncode == 4, (p.returncode, p.stderr)
    trace = load(path)
    assert spans(trace) == [] and instants(trace) == [], trace  # (speedscope shows no empty trace)


@case
def gpu_records_trace_imports(ctx):
    """The trace the runtime unit test made from hand-made GPU ring records (a launch, a gpu
    printf): its GPU track imports, named by the kernel, with the launch's span."""
    path = os.path.join(ctx.build, "timeline_gpu_records.json")
    if not os.path.exists(path):
        return "SKIP"  # runtime_tests has not run
    trace = load(path)
    gpu = spans(trace, "scale")
    assert len(gpu) == 1 and gpu[0]["cat"] == "gpu", gpu
    tracks = viewer(ctx, path)
    assert tracks == {"GPU (pid 7) (pid 1073741831), scale (tid 3)": {"scale": 1}}, tracks


@case
def viewer_refuses_a_broken_trace(ctx):
    """The viewer check is real: a span ended twice and a cut file are refused."""
    bad = tmpfile("bad.json")
    with open(bad, "w") as f:
        f.write('{"traceEvents":[{"ph":"E","name":"f","pid":1,"tid":1,"ts":5}]}')
    p = subprocess.run(["node", os.path.join(HERE, "timeline", "speedscope_import.mjs"),
                        ctx.viewer, bad], capture_output=True, text=True, timeout=120)
    assert p.returncode != 0, p.stdout
    with open(bad, "w") as f:
        f.write('{"traceEvents":[{"ph":"X","name":"f","pid":1,')
    p = subprocess.run(["node", os.path.join(HERE, "timeline", "speedscope_import.mjs"),
                        ctx.viewer, bad], capture_output=True, text=True, timeout=120)
    assert p.returncode != 0, p.stdout


@case
def bad_options_are_refused(ctx):
    r = run(ctx, ["--timeline-events", "0", "-e", "BEGIN { exit(); }"])
    assert r.returncode != 0
    assert "--timeline-events takes a number from 1 to 100000000, not '0'" in r.stderr, r.stderr
    r = run(ctx, ["--timeline", "/nonexistent/dir/t.json", "-e", "BEGIN { exit(); }"])
    assert r.returncode != 0
    assert "ERROR: --timeline: cannot write /nonexistent/dir/t.json" in r.stderr, r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpubt", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--viewer", required=True, help="speedscope's install (setup-trace-viewer.sh)")
    ap.add_argument("--build", required=True, help="the build folder (unit tests leave files)")
    ap.add_argument("--filter", default="")
    ctx = ap.parse_args()
    setup = os.path.join(HERE, "..", "..", "scripts", "setup-trace-viewer.sh")
    if subprocess.run([setup, ctx.viewer]).returncode != 0:
        print("FAIL: no trace viewer (scripts/setup-trace-viewer.sh)")
        return 1
    return run_cases(ctx, ctx.filter)


if __name__ == "__main__":
    sys.exit(main())
