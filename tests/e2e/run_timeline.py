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
import shutil
import stat
import time

HERE = os.path.dirname(os.path.abspath(__file__))
from case_list import case, run_cases


def run(ctx, args, timeout=30):
    return subprocess.run([ctx.gpubt] + args, capture_output=True, text=True, errors="replace",
                          stdin=subprocess.DEVNULL, timeout=timeout)


def load(path, alone=True):
    """The trace, checked for what every gpubt trace must be."""
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    assert set(trace) == {"traceEvents", "displayTimeUnit", "otherData"}, sorted(trace)
    for e in trace["traceEvents"]:
        assert e["ph"] in ("X", "i", "M"), e  # spans are complete events: never a lone B or E
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
        if e["ph"] == "X":
            assert e["dur"] >= 0 and e["ts"] > 0, e
    # Nothing beside it: the segments had no name, the private temporary was renamed.
    assert not alone or os.listdir(os.path.dirname(path)) == [os.path.basename(path)], os.listdir(
        os.path.dirname(path))
    return trace


def spans(trace, name=None):
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and name in (None, e["name"])]


def instants(trace):
    """printf()s: the instants that carry spans' args (cat "args") are not among them."""
    return [e for e in trace["traceEvents"] if e["ph"] == "i" and e["cat"] != "args"]


def span_args(trace, name=None):
    """The spans named NAME (all: None) with their args, which the instant right after each in
    the file carries (none: {}); an args instant sits at its span's start, on its track."""
    events = trace["traceEvents"]
    out = []
    for i, e in enumerate(events):
        if e["ph"] != "X" or name not in (None, e["name"]):
            continue
        assert "args" not in e, e  # speedscope would make a frame of each value
        nxt = events[i + 1] if i + 1 < len(events) else {}
        if nxt.get("ph") == "i" and nxt.get("cat") == "args":
            assert (nxt["ts"], nxt["pid"], nxt["tid"]) == (e["ts"], e["pid"], e["tid"]), (e, nxt)
            out.append((e, nxt["args"], nxt["name"]))
        else:
            out.append((e, {}, None))
    return out


def viewer(ctx, path):
    """speedscope's import of the file: {track name: {frame name: spans}}; fails if it cannot.
    speedscope names a frame by its event's name and, where the event has args, their JSON
    ('add {"retval":3}'): a span with args would be a frame of its own per value."""
    p = subprocess.run(["node", os.path.join(HERE, "timeline", "speedscope_import.mjs"),
                        ctx.viewer, path], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"speedscope: {p.stdout[-500:]} {p.stderr[-500:]}"
    return {prof["name"]: prof["frames"] for prof in json.loads(p.stdout)["profiles"]}


def names(trace, what):
    """process_name ({pid: name}) or thread_name ({(pid, tid): name}) metadata."""
    return {(e["pid"] if what == "process_name" else (e["pid"], e["tid"])): e["args"]["name"]
            for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == what}


def track(e, trace):
    """The track's name as speedscope shows it: its process's and thread's names (each with
    its number), or the numbers alone."""
    p = names(trace, "process_name").get(e["pid"])
    t = names(trace, "thread_name").get((e["pid"], e["tid"]))
    if p is not None and t is not None:
        return f"{p} (pid {e['pid']}), {t} (tid {e['tid']})"
    if p is not None or t is not None:
        return f"{p if p is not None else t} (pid {e['pid']}, tid {e['tid']})"
    return f"pid {e['pid']}, tid {e['tid']}"


def expect_viewer_matches(ctx, path, trace):
    """Every span of the file is a frame of its track in speedscope."""
    want = {}
    for e in spans(trace):
        frames = want.setdefault(track(e, trace), {})
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
    # add(i, r) returns i + r: each span's retval, on the instant at its start (its name too).
    calls = span_args(trace, "add")
    assert sorted(a["retval"] for _, a, _ in calls) == sorted(i + r for r in range(3)
                                                              for i in range(10))
    assert all(label == f"add = {a['retval']}" for _, a, label in calls), calls[:3]
    ticks = instants(trace)
    assert [e["name"] for e in ticks] == ["tick 0", "tick 1", "tick 2"], ticks
    assert all(e["args"]["probe"].endswith("calls:tick") for e in ticks)
    # One thread, one track, named by the program's comm (the trace-event format's
    # process_name and thread_name metadata), as viewers show it.
    pid = adds[0]["pid"]
    assert {track(e, trace) for e in adds + ticks} == {f"calls (pid {pid}), calls (tid {pid})"}
    assert trace["otherData"]["dropped_events"] == 0
    expect_viewer_matches(ctx, path, trace)
    # It says what it wrote, and how to look at it.
    assert f"gpubt: wrote {path}: 33 events (30 calls, 3 printfs, 0 gpu launches); open it in " \
           "ui.perfetto.dev, chrome://tracing or speedscope\n" in r.stderr, r.stderr
    assert "WARNING" not in r.stderr, r.stderr


@case
def a_script_that_makes_no_events_is_warned_of(ctx):
    """An entry probe alone makes no span: said before tracing, and again at the end with the
    file's (valid, empty) events; -q says neither what it wrote."""
    path = tmpfile("empty.json")
    script = f"uprobe:{ctx.programs}/calls:add {{ @n = count(); }}"
    r = run(ctx, ["--timeline", path, "-e", script, "-c", f"{ctx.programs}/calls 1"])
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("WARNING: --timeline: this script makes no timeline events: a "
                               "span needs a function probed at both entry and return"), r.stderr
    assert f"gpubt: wrote {path}: 0 events (0 calls, 0 printfs, 0 gpu launches)" in r.stderr
    assert "WARNING: the timeline is empty" in r.stderr, r.stderr
    assert spans(load(path)) == []
    q = run(ctx, ["-q", "--timeline", path, "-e", script, "-c", f"{ctx.programs}/calls 1"])
    assert q.returncode == 0 and "gpubt: wrote" not in q.stderr, q.stderr


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
    assert all(a for _, a, _ in span_args(trace)), trace  # a span and its args kept together
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
    mallocs = [a for _, a, _ in span_args(trace, "cudaMalloc")]
    launches = [a for _, a, _ in span_args(trace, "cudaLaunchKernel")]
    assert sorted(a["size"] for a in mallocs) == [1024] * 3 + [4096] * 2 + [1048576]
    assert {a["retval"] for a in mallocs + launches} == {"cudaErrorInsufficientDriver"}
    assert len(launches) == 4
    assert {(a["gridDim"], a["blockDim"]) for a in launches} == {
        ("(2, 1, 1)", "(128, 1, 1)")}, launches[0]
    assert set(launches[0]) == {"func", "gridDim", "blockDim", "args", "sharedMem",
                                "stream", "retval"}, launches[0]
    # Pointers and handles in hex, as C prints %p (JSON has no hex numbers: strings).
    for a in launches:
        for arg in ("func", "args", "stream"):
            v = a[arg]
            assert isinstance(v, str) and (v == "0x0" or v.startswith("0x")), (arg, v)
            int(v, 16)
    assert isinstance(mallocs[0]["size"], int)  # sizes stay numbers
    # The instant's name reads as strace writes a call.
    _, a, label = span_args(trace, "cudaMalloc")[0]
    assert label == f"cudaMalloc(devPtr={a['devPtr']}, size={a['size']}) = " \
        "cudaErrorInsufficientDriver", label
    # In speedscope every cudaMalloc is one frame, whatever its size: its aggregate views
    # (left heavy, sandwich) sum them (with args in the frame name, 3 frames).
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
    trace = load(path, alone=False)
    gpu = spans(trace, "scale")
    assert len(gpu) == 1 and gpu[0]["cat"] == "gpu", gpu
    tracks = viewer(ctx, path)
    assert tracks == {"GPU (pid 7) (pid 1073741831), scale (tid 3)": {"scale": 1}}, tracks
    assert [(a, label) for _, a, label in span_args(trace, "scale")] == [
        ({"kernel": "scale", "launch": 0}, "scale launch 0")]


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


# --- files gpubt must never harm (issue 23): a root gpubt, another user's plants, odd files

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]
PRINTFS = "uprobe:{p}/calls:add {{ printf(\"add %d %d\\n\", arg0, arg1); }}"


@case
def a_planted_temporary_is_never_followed(ctx):
    """S1: another user plants FILE.tmp -> a victim in a folder both may write (no sticky bit,
    so fs.protected_symlinks does not step in). Root's gpubt leaves the victim and the link
    alone, and FILE is a regular file of its own."""
    folder = tempfile.mkdtemp(prefix="gpubt-timeline-shared-")
    os.chmod(folder, 0o777)
    victim = os.path.join(tempfile.mkdtemp(prefix="gpubt-victim-"), "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    path = os.path.join(folder, "x.json")
    for name in ("x.json.tmp", ".x.json.tmp"):
        subprocess.run(NOBODY + ["ln", "-s", victim, os.path.join(folder, name)], check=True)
    try:
        r = run(ctx, ["--timeline", path, "-e", PRINTFS.format(p=ctx.programs), "-c",
                      f"{ctx.programs}/calls 2"])
        assert r.returncode == 0, r.stderr
        with open(victim) as f:
            assert f.read() == "precious\n"
        for name in ("x.json.tmp", ".x.json.tmp"):
            assert os.readlink(os.path.join(folder, name)) == victim
        st = os.lstat(path)
        assert stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid(), st
        with open(path) as f:
            assert len([e for e in json.load(f)["traceEvents"] if e["ph"] == "i"]) == 20
    finally:
        shutil.rmtree(folder)
        shutil.rmtree(os.path.dirname(victim))


@case
def a_folder_swapped_for_a_link_mid_run_is_not_followed(ctx):
    """Root traces into a folder another user owns; mid-run that user swaps the folder for a
    link to one of root's. The trace goes to the folder gpubt checked at the start, never
    through the link: root's file of that name is left alone."""
    base = tempfile.mkdtemp(prefix="gpubt-timeline-swap-")
    os.chmod(base, 0o755)
    os.chown(base, 65534, 65534)
    subprocess.run(NOBODY + ["mkdir", os.path.join(base, "sub")], check=True)
    victim_folder = tempfile.mkdtemp(prefix="gpubt-victim-")
    victim = os.path.join(victim_folder, "t.json")
    with open(victim, "w") as f:
        f.write("precious\n")
    try:
        path = os.path.join(base, "sub", "t.json")
        p = start_ticking(ctx, path)
        swap = f"cd {base} && mv sub old && ln -s {victim_folder} sub"
        subprocess.run(NOBODY + ["sh", "-c", swap], check=True)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=20)
        assert p.returncode == 0, (p.returncode, err)
        with open(victim) as f:
            assert f.read() == "precious\n", "root's file was replaced through the link"
        assert os.listdir(victim_folder) == ["t.json"], os.listdir(victim_folder)
        with open(os.path.join(base, "old", "t.json")) as f:
            assert any(e.get("name") == "tick" for e in json.load(f)["traceEvents"])
    finally:
        shutil.rmtree(base)
        shutil.rmtree(victim_folder)


def refused(ctx, path, kind):
    r = run(ctx, ["--timeline", path, "-e", "BEGIN { exit(); }"])
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert f"ERROR: --timeline: {path} is {kind}; gpubt writes a new file and renames it over " \
        "FILE, which would replace it: name a regular file" in r.stderr, r.stderr


@case
def devices_fifos_symlinks_and_folders_are_refused_and_left_alone(ctx):
    """Never replaced by a JSON file. The device is a null device of the test's own (mknod c
    1 3): a gpubt that replaced it harms nothing, as it would the real /dev/null or /dev/full."""
    folder = tempfile.mkdtemp(prefix="gpubt-timeline-odd-")
    null, fifo, link, sub = (os.path.join(folder, n) for n in ("null", "fifo", "stdout", "sub"))
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    os.mkfifo(fifo)
    os.symlink("/dev/stdout", link)
    os.mkdir(sub)
    refused(ctx, null, "a character device")
    refused(ctx, fifo, "a FIFO")
    refused(ctx, link, "a symbolic link")
    refused(ctx, sub, "a directory")
    assert stat.S_ISCHR(os.lstat(null).st_mode) and os.lstat(null).st_rdev == os.makedev(1, 3)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert os.readlink(link) == "/dev/stdout"
    assert os.listdir(sub) == []
    assert sorted(os.listdir(folder)) == ["fifo", "null", "stdout", "sub"], os.listdir(folder)


@case
def a_full_disk_fails_the_run_and_leaves_nothing(ctx):
    """A 64 KiB file system: the trace does not fit; gpubt says so and exits 2 (docs/exit-status.md:
    "output could not be written"), and nothing is left there."""
    folder = tempfile.mkdtemp(prefix="gpubt-timeline-full-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", folder], check=True)
    try:
        path = os.path.join(folder, "t.json")
        r = run(ctx, ["--timeline", path, "-e", PRINTFS.format(p=ctx.programs), "-c",
                      f"{ctx.programs}/calls 100"])
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert f"ERROR: --timeline: cannot write {path}: No space left on device" in r.stderr, \
            r.stderr
        assert "add 9 99" in r.stdout  # the trace itself ran to the end
        assert os.listdir(folder) == [], os.listdir(folder)
    finally:
        subprocess.run(["umount", folder], check=True)


def start_ticking(ctx, path):
    """gpubt --timeline PATH printing spin's ticks, once it traces (Ctrl-C then ends it)."""
    prog = f"uprobe:{ctx.programs}/spin:tick {{ printf(\"tick\\n\"); }}"
    p = subprocess.Popen([ctx.gpubt, "--timeline", path, "-e", prog, "-c",
                          f"{ctx.programs}/spin 20"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    assert p.stdout.readline().startswith("Attaching")
    assert p.stdout.readline() == "tick\n"
    return p


@case
def a_folder_removed_mid_run_fails_the_run(ctx):
    folder = tempfile.mkdtemp(prefix="gpubt-timeline-gone-")
    path = os.path.join(folder, "t.json")
    p = start_ticking(ctx, path)
    shutil.rmtree(folder)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 2, (p.returncode, err)
    assert f"ERROR: --timeline: cannot write {path}: No such file or directory" in err, err
    assert not os.path.exists(folder)


@case
def two_gpubt_writing_one_file_leave_valid_json(ctx):
    """Each writes a private temporary and renames it: the file is one of theirs, whole. Both
    are stopped by one Ctrl-C each at once, with ~20 MB to write, so their writes overlap (the
    old FILE.tmp shared by both gave invalid JSON)."""
    prog = (f"uprobe:{ctx.programs}/spin:tick {{ unroll(50) "
            f"{{ printf(\"%1000d\\n\", arg0); }} }}")
    for _ in range(3):
        path = tmpfile("shared.json")
        procs = [subprocess.Popen([ctx.gpubt, "--timeline", path, "-e", prog, "-c",
                                   f"{ctx.programs}/spin 30"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL, text=True) for _ in range(2)]
        for p in procs:
            for _ in range(50 * 100 * 2):  # two seconds of events: ~20 MB of trace
                assert p.stdout.readline(), p.stderr.read()
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            _, err = p.communicate(timeout=60)
            assert p.returncode == 0, err
        trace = load(path)
        assert len(instants(trace)) >= 50 * 100 * 2 - 1, len(instants(trace))  # less "Attaching"


@case
def a_signal_while_the_maps_print_keeps_the_timeline(ctx):
    """The file is in place before the exit maps print: gpubt blocked writing a map of 4,096
    keys into a pipe nobody reads, then killed by SIGTERM there, has written it."""
    path = tmpfile("maps.json")
    prog = (f"uprobe:{ctx.programs}/calls:add {{ @[arg0, arg1, nsecs] = count(); }} "
            f"uretprobe:{ctx.programs}/calls:add {{}}")
    p = subprocess.Popen([ctx.gpubt, "--timeline", path, "-e", prog, "-c",
                          f"{ctx.programs}/calls 1000"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    import fcntl
    import termios
    size = fcntl.fcntl(p.stdout.fileno(), 1032)  # F_GETPIPE_SZ
    deadline = time.time() + 60
    # Half the pipe queued: only the map printout writes that much, and its 4,096 keys (the
    # map's size) take more than the pipe holds, so gpubt is in it and stays there.
    while True:
        queued = fcntl.ioctl(p.stdout.fileno(), termios.FIONREAD, b"\0\0\0\0")
        if int.from_bytes(queued, "little") >= size // 2:
            break
        assert time.time() < deadline and p.poll() is None, "gpubt never filled its stdout"
        time.sleep(0.1)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=20)
    assert p.returncode == -signal.SIGTERM, p.returncode
    trace = load(path)
    assert len(spans(trace, "add")) == 10000, len(spans(trace, "add"))


def peak_rss_mb(args):
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, (p.returncode, p.stderr.read()[-500:])
    return usage.ru_maxrss / 1024


@case
def memory_stays_bounded_with_large_printfs(ctx):
    """Printfs of 4,000 characters: a trace of ~120 MB streams to the folder; gpubt's
    peak memory is within 48 MB of the same trace without --timeline."""
    path = tmpfile("big.json")
    # 100 printfs every 10 ms: a pace gpubt keeps up with, so that none is lost.
    prog = (f"uprobe:{ctx.programs}/spin:tick {{ unroll(100) "
            f"{{ printf(\"%1000d%1000d%1000d%1000d\\n\", arg0, arg0, arg0, arg0); }} }}")
    args = ["-e", prog, "-c", f"{ctx.programs}/spin 3"]
    without = peak_rss_mb([ctx.gpubt] + args)
    with_timeline = peak_rss_mb([ctx.gpubt, "--timeline", path] + args)
    size_mb = os.path.getsize(path) / 2**20
    assert size_mb > 48, size_mb  # more than the bound: a trace held in memory fails it
    assert with_timeline - without < 48, (with_timeline, without, size_mb)
    print(f"  peak RSS {with_timeline:.0f} MB, {without:.0f} MB without; {size_mb:.0f} MB file")
    trace = load(path)
    assert len(instants(trace)) + trace["otherData"]["lost_events"] == 30000


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
    # Every folder the cases make (tempfile's) goes under one scratch folder, removed at the end
    # whatever a case left (the victim folders of the S1 cases were left in /tmp at each run).
    # Mode 0755: nobody, who plays the other user, reaches the folders made for it inside.
    scratch = tempfile.mkdtemp(prefix="gpubt-timeline-run-")
    os.chmod(scratch, 0o755)
    tempfile.tempdir = scratch
    try:
        status = run_cases(ctx, ctx.filter)
    finally:
        tempfile.tempdir = None
        shutil.rmtree(scratch, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
