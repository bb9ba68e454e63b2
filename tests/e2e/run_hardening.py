#!/usr/bin/env python3
"""Hardening cases the directive files cannot express (issue 17): killing or stopping gpubt at
each point where it holds a process, -o files, huge generated scripts, a non-root user. Each
case is bounded to a few seconds; the traced programs are the suite's own."""
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

from case_list import case, run_main


def state(pid):
    """The state letter of /proc/PID/stat, or None once it is gone (or a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    letter = s[s.rindex(")") + 2]
    return None if letter in "ZX" else letter


def wait_for(pred, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def start_gpubt(ctx, args, **kw):
    return subprocess.Popen([ctx.gpubt] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, errors="replace", **kw)


def wait_attached(p, timeout=10):
    """Reads gpubt's stdout until its "Attaching N probes..." line."""
    end = time.time() + timeout
    while time.time() < end:
        line = p.stdout.readline()
        if not line:
            return False
        if line.startswith("Attaching"):
            return True
    return False


def run(ctx, args, timeout=20, **kw):
    return subprocess.run([ctx.gpubt] + args, capture_output=True, text=True, errors="replace",
                          stdin=subprocess.DEVNULL, timeout=timeout, **kw)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def killed(p):
    if p.poll() is None:
        p.kill()
    p.wait()


# --- item 7: the -c child ends with gpubt however gpubt ends

def child_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def check_child_dies_with_gpubt(ctx, sig):
    p = start_gpubt(ctx, ["-c", f"{ctx.programs}/spin 30", "-e",
                          f"uprobe:{ctx.programs}/spin:tick {{ @n = count(); }}"])
    try:
        expect(wait_attached(p), "gpubt did not attach")
        kids = child_of(p.pid)
        expect(kids, "no -c child")
        p.send_signal(sig)
        p.wait(5)
        expect(wait_for(lambda: all(state(k) is None for k in kids), 3),
               f"the -c child {kids} still runs after gpubt got signal {sig}")
    finally:
        killed(p)


@case
def c_child_dies_with_gpubt_on_sigkill(ctx):
    check_child_dies_with_gpubt(ctx, signal.SIGKILL)


@case
def c_child_dies_with_gpubt_on_sighup(ctx):
    check_child_dies_with_gpubt(ctx, signal.SIGHUP)


@case
def stale_gpu_temp_folder_removed_at_start(ctx):
    # A folder whose owner lock nobody holds (its gpubt was killed) goes at the next gpu run;
    # one whose lock is held (a running gpubt) stays.
    import fcntl
    stale = tempfile.mkdtemp(prefix="gpubt-gpu-", dir="/tmp")
    open(os.path.join(stale, ".owner.lock"), "w").close()
    open(os.path.join(stale, "results.bin"), "w").close()
    live = tempfile.mkdtemp(prefix="gpubt-gpu-", dir="/tmp")
    lock = open(os.path.join(live, ".owner.lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        env = dict(os.environ, GPUBT_AGENT_PATH=f"{ctx.programs}/calls")  # any file will do
        run(ctx, ["-c", f"{ctx.programs}/calls 1", "-e", "gpu:kretprobe:vectorAdd { @k = count(); }"],
            env=env)
        expect(not os.path.exists(stale), f"{stale} was not removed")
        expect(os.path.exists(live), f"{live}, still locked, was removed")
    finally:
        lock.close()
        subprocess.run(["rm", "-rf", stale, live])


# --- item 2: a -p target is never left stopped

def check_p_target_not_left_stopped(ctx, target, script, stop_gpubt_first):
    t = subprocess.Popen(target, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p = start_gpubt(ctx, ["-p", str(t.pid), "-e", script])
    try:
        expect(wait_attached(p), "gpubt did not attach")
        if stop_gpubt_first:
            p.send_signal(signal.SIGSTOP)  # gpubt cannot release the target now
        # the target reaches its stop point (exit(), or a library load) while gpubt is stopped
        ended = wait_for(lambda: t.poll() is not None, 6)
        p.send_signal(signal.SIGKILL)
        p.wait(5)
        if not ended:
            ended = wait_for(lambda: t.poll() is not None, 3)
        expect(ended, f"the -p target is left in state {state(t.pid)}")
    finally:
        killed(p)
        if t.poll() is None:
            os.kill(t.pid, signal.SIGCONT)
            t.kill()
        t.wait()


@case
def p_target_held_at_exit_resumes_when_gpubt_is_stopped_then_killed(ctx):
    check_p_target_not_left_stopped(
        ctx, [f"{ctx.programs}/spin", "2"],
        f"uprobe:{ctx.programs}/spin:tick {{ @[ustack] = count(); }}", True)


@case
def p_target_held_at_library_load_resumes_when_gpubt_is_stopped_then_killed(ctx):
    lib = f"{ctx.programs}/fake-cudart/libcudart.so.13"
    if not os.path.exists(lib):
        return "SKIP"
    check_p_target_not_left_stopped(
        ctx, [f"{ctx.programs}/dlopen_calls", lib, "cudaMalloc", "3", "2"],
        "host:uprobe:cudart:cudaMalloc { @ = count(); }", True)


@case
def p_target_held_at_exit_when_gpubt_is_killed(ctx):
    check_p_target_not_left_stopped(
        ctx, [f"{ctx.programs}/spin", "2"],
        f"uprobe:{ctx.programs}/spin:tick {{ @[ustack] = count(); }}", False)


# --- item 5: -o FILE

@case
def o_file_kept_when_the_script_does_not_compile(ctx):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.txt")
        with open(out, "w") as f:
            f.write("precious\n")
        r = run(ctx, ["-o", out, "-e", "BEGIN { @x = ; }"])
        expect(r.returncode == 1, f"exit {r.returncode}")
        expect(open(out).read() == "precious\n", "-o FILE was truncated by a failed compile")


@case
def o_script_itself_is_refused(ctx):
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "s.bt")
        text = "BEGIN { printf(\"hi\\n\"); exit(); }\n"
        with open(script, "w") as f:
            f.write(text)
        r = run(ctx, ["-o", script, script])
        expect(r.returncode == 1, f"exit {r.returncode}")
        expect(f"ERROR: output file '{script}' is the script itself" in r.stderr, r.stderr)
        expect(open(script).read() == text, "the script was overwritten")


@case
def o_unwritable_file_ends_the_trace_with_an_error(ctx):
    # /dev/full: every write fails with ENOSPC; the trace stops at the first and exits 2.
    start = time.time()
    r = run(ctx, ["-o", "/dev/full", "-e",
                  "interval:ms:10 { printf(\"tick\\n\"); } interval:s:20 { exit(); }"], timeout=15)
    expect(r.returncode == 2, f"exit {r.returncode}: {r.stderr}")
    expect("ERROR: failed to write output file '/dev/full': No space left on device" in r.stderr,
           r.stderr)
    expect(time.time() - start < 10, "the trace went on after its output failed")


# --- item 4: the parser's recursion is bounded for every recursive rule

def check_too_deep(ctx, text):
    with tempfile.NamedTemporaryFile("w", suffix=".bt") as f:
        f.write(text)
        f.flush()
        r = run(ctx, ["--dry-run", f.name], timeout=60)
    expect(r.returncode == 1, f"exit {r.returncode} (signal?): {r.stderr[-500:]}")
    expect("nesting too deep" in r.stderr, r.stderr[-500:])


DEEP_SCRIPTS = {
    "3,000,000 unary operators (SIGSEGV before)": "BEGIN { @x = " + "!" * 3_000_000 + "1; exit(); }",
    "unary operators and casts": "BEGIN { @x = " + "-~(int8)" * 300_000 + "1; }",
    "a ?: chain": "BEGIN { @x = " + "1 ? 2 : " * 300_000 + "3; }",
    "an else-if chain": "BEGIN { if (1) { } " + "else if (1) { } " * 200_000 + "}",
    "a long operator chain": "BEGIN { @x = 1" + " + 1" * 500_000 + "; }",
}


@case
def parser_recursion_is_bounded_for_every_rule(ctx):
    for what, text in DEEP_SCRIPTS.items():
        try:
            check_too_deep(ctx, text + "\n")
        except AssertionError as e:
            raise AssertionError(f"{what}: {e}") from None


# --- item 3: probe count cap

@case
def probe_count_capped_at_512(ctx):
    start = time.time()
    r = run(ctx, ["-e", " ".join(["BEGIN { @n = count(); }"] * 600) + " BEGIN { exit(); }"])
    expect(r.returncode == 1, f"exit {r.returncode}")
    expect("ERROR: Can't attach to 601 probes because it exceeds the current limit of 512 probes."
           in r.stderr, r.stderr)
    expect(time.time() - start < 10, "took too long")
    r = run(ctx, ["-e", " ".join(["BEGIN { @n = count(); }"] * 600) + " BEGIN { exit(); }"],
            env=dict(os.environ, BPFTRACE_MAX_PROBES="1000"))
    expect(r.returncode == 0 and "@n: 600" in r.stdout, f"exit {r.returncode}: {r.stderr}")


# --- item 6: misleading errors

@case
def non_root_is_told_what_it_needs(ctx):
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        "--inh-caps=-all", ctx.gpubt, "-e", "BEGIN { exit(); }"],
                       capture_output=True, text=True, timeout=20)
    expect(r.returncode == 1, f"exit {r.returncode}: {r.stderr}")
    expect("ERROR: gpubt needs to run as root, or with the CAP_BPF and CAP_PERFMON capabilities, "
           "to load BPF programs and attach probes" in r.stderr, r.stderr)


@case
def out_of_descriptors_says_so(ctx):
    # 1,100 uprobes under a hard limit of 200 descriptors: gpubt raises its soft limit to the
    # hard one and, out of descriptors, says EMFILE, not "not an ELF file".
    probes = " ".join(f"uprobe:{ctx.programs}/calls:tick {{ @a{i} = count(); }}"
                      for i in range(300))
    r = subprocess.run(["prlimit", "--nofile=200:200", ctx.gpubt, "--dry-run", "-e", probes],
                       capture_output=True, text=True, timeout=30)
    expect(r.returncode == 0, f"dry run: exit {r.returncode}: {r.stderr[-300:]}")
    r = subprocess.run(["prlimit", "--nofile=200:200", ctx.gpubt, "-e", probes + " BEGIN { exit(); }"],
                       capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, BPFTRACE_MAX_PROBES="2000"))
    expect(r.returncode != 0, f"exit {r.returncode}")
    expect("Too many open files" in r.stderr, r.stderr[-500:])
    expect("not an ELF file" not in r.stderr, r.stderr[-500:])


@case
def out_of_descriptors_for_maps_names_the_limit(ctx):
    # 300 maps under a hard limit of 200 descriptors: the map that does not fit says the limit,
    # as docs/limits.md promises ("Too many open files (the open-file limit is N)").
    maps = " ".join(f"@m{i} = 1;" for i in range(300))
    r = subprocess.run(["prlimit", "--nofile=200:200", ctx.gpubt, "-e",
                        f"BEGIN {{ {maps} exit(); }}"], capture_output=True, text=True, timeout=30)
    expect(r.returncode == 1, f"exit {r.returncode}: {r.stderr[-300:]}")
    expect("Too many open files (the open-file limit is 200)" in r.stderr, r.stderr[-500:])


# --- issue 23 S2: a root gpubt and another (unprivileged) user's fake agent sockets

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]
GPU_SCRIPT = "gpu:kprobe:vectorAdd { @ = count(); }"


def nobodys_agent_folder(work):
    """A folder of nobody's in WORK (a folder of root's, mode 0755) for agent sockets: gpubt
    finds it through GPUBT_AGENT_DIR (gpu_env). Not /tmp/gpubt-agent-65534: another run of the
    suite beside this one (another checkout) would make and remove the same folder."""
    folder = os.path.join(work, "agent-65534")
    os.mkdir(folder, 0o700)
    os.chown(folder, 65534, 65534)
    return folder


class FakeAgent:
    """tests/e2e/fake_agent.py run by nobody, binding FOLDER/NAME_PID.sock (FOLDER: a private
    one of nobody's, by default). LIB: it maps a file named libgpubt_agent.so, so it looks like a
    process that loaded the agent."""

    def __init__(self, name_pid, mode, lib=False, folder=None, env=None):
        self.work = tempfile.mkdtemp(prefix="gpubt-fake-agent-")
        os.chmod(self.work, 0o755)
        self.private = folder is None
        self.folder = nobodys_agent_folder(self.work) if self.private else folder
        script = os.path.join(self.work, "fake_agent.py")
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_agent.py")) as f:
            source = f.read()
        with open(script, "w") as f:
            f.write(source)
        self.lib = os.path.join(self.work, "libgpubt_agent.so")
        with open("/bin/true", "rb") as src, open(self.lib, "wb") as dst:
            dst.write(src.read())
        self.log = os.path.join(self.work, "log")
        open(self.log, "w").close()
        os.chmod(self.log, 0o666)
        args = NOBODY + ["python3", script, self.folder, str(name_pid), mode, self.log]
        self.p = subprocess.Popen(args + ([self.lib] if lib else []), stdin=subprocess.DEVNULL,
                                  env=dict(os.environ, **(env or {})))
        expect(wait_for(lambda: "ready" in self.said(), 30), "the fake agent did not start")
        self.pid = int(self.said().split()[1])

    def said(self):
        with open(self.log) as f:
            return f.read()

    def close(self):
        killed(self.p)
        subprocess.run(["rm", "-rf", self.work])


def with_fake_agent(name_pid, mode, lib, body, env=None):
    fake = FakeAgent(name_pid, mode, lib, env=env)
    try:
        return body(fake)
    finally:
        fake.close()


def gpu_env(fake):
    # gpubt checks that an agent library exists before attaching; the fake's copy will do.
    env = dict(os.environ, GPUBT_AGENT_PATH=fake.lib)
    if fake.private:
        env["GPUBT_AGENT_DIR"] = fake.folder
    return env


@case
def p_fake_socket_of_another_user_is_not_connected_to(ctx):
    # nobody names its socket after a root process: root's `gpubt -p` must not talk to it.
    target = subprocess.Popen(["sleep", "60"])
    try:
        def body(fake):
            r = run(ctx, ["-p", str(target.pid), "-e", GPU_SCRIPT], env=gpu_env(fake),
                    timeout=60)
            expect(r.returncode != 0, f"exit {r.returncode}: {r.stderr}")
            expect("connected" not in fake.said(), f"root connected to the fake: {r.stderr}")
            expect("belongs to uid 65534" in r.stderr, r.stderr)
        with_fake_agent(target.pid, "silent", False, body)
    finally:
        killed(target)


@case
def no_p_fake_socket_without_the_agent_is_not_connected_to(ctx):
    # Without -p root attaches to every agent: a process that has not loaded it is not one.
    def body(fake):
        r = run(ctx, ["-e", GPU_SCRIPT + " interval:ms:700 { exit(); }"], env=gpu_env(fake),
                timeout=60)
        expect("connected" not in fake.said(), f"root connected to the fake: {r.stderr}")
        expect(f"process {fake.pid}: not connecting" in r.stderr and
               "has not loaded gpubt's agent" in r.stderr, r.stderr)
    with_fake_agent("self", "silent", False, body)


@case
def agent_text_reaches_the_terminal_escaped(ctx):
    # Even a process that looks like an agent's (it maps libgpubt_agent.so) is another user's:
    # what it answers is printed with its escape sequences as text.
    def body(fake):
        r = run(ctx, ["-p", str(fake.pid), "-e", GPU_SCRIPT], env=gpu_env(fake), timeout=60)
        expect("attach" in fake.said(), f"the fake got no Attach: {r.stderr}")
        expect(r.returncode != 0, f"exit {r.returncode}")
        expect("\x1b" not in r.stderr and "\x9b" not in r.stderr and "\x07" not in r.stderr,
               f"raw escapes printed: {r.stderr!r}")
        expect("\\x1b]0;owned\\x07\\x1b[2J" in r.stderr, r.stderr)
    with_fake_agent("self", "escape", True, body)


@case
def agent_warning_is_printed_without_v(ctx):
    # A warning the agent sends while attaching (the GPU never went idle: nothing patched) is
    # printed whatever -v, escaped; its -v lines only with -v.
    def body(fake):
        r = run(ctx, ["-p", str(fake.pid), "-e", GPU_SCRIPT], env=gpu_env(fake), timeout=60)
        expect(f"WARNING: [{fake.pid}] \\x1b[2Jthe GPU is busy" in r.stderr, r.stderr)
        expect("a -v line" not in r.stderr and "\x1b" not in r.stderr, r.stderr)
    with_fake_agent("self", "warn", True, body)


@case
def agent_folder_name_reaches_the_terminal_escaped(ctx):
    # Anyone may make /tmp/gpubt-agent-<anything>: a folder named with terminal escapes, and a
    # socket in it named after a process of that user's without the agent. Root's gpubt warns
    # about it, path and all: escaped.
    folder = "/tmp/gpubt-agent-\x1b]0;owned\x07\x1b[2J"
    subprocess.run(["rm", "-rf", folder])
    fake = FakeAgent("self", "silent", False, folder)
    try:
        r = run(ctx, ["-e", GPU_SCRIPT + " interval:ms:300 { exit(); }"], env=gpu_env(fake),
                timeout=60)
        expect(f"process {fake.pid}: not connecting" in r.stderr, r.stderr)
        expect("\x1b" not in r.stderr and "\x07" not in r.stderr,
               f"raw escapes printed: {r.stderr!r}")
        expect("gpubt-agent-\\x1b]0;owned\\x07\\x1b[2J/" in r.stderr, repr(r.stderr))
    finally:
        fake.close()
        subprocess.run(["rm", "-rf", folder])


@case
def no_p_agent_whose_first_attach_failed_is_tried_again(ctx):
    # Without -p, an agent whose attach failed once (here it closes the first connection
    # unanswered, as one busy or starting would fail) was never tried again in that session:
    # it is now, after a backoff, and attached.
    def body(fake):
        p = start_gpubt(ctx, ["-e", GPU_SCRIPT], env=gpu_env(fake))
        try:
            again = wait_for(lambda: fake.said().count("attach") >= 2 or p.poll() is not None,
                             60)
            expect(again and p.poll() is None,
                   f"one attach in 60 s, gpubt {'ended' if p.poll() is not None else 'runs'}: "
                   f"{fake.said()!r}")
        finally:
            p.send_signal(signal.SIGINT)
            try:
                _, err = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                killed(p)
                raise
        expect(f"WARNING: process {fake.pid}: the agent did not answer (closed) (tried again "
               "until the trace ends)" in err, err)
        expect("did not send its GPU maps" not in err and "went away" not in err, err)
    with_fake_agent("self", "failfirst", True, body)


@case
def p_gpu_hang_takes_running_launches_from_the_agents_frames(ctx):
    # Issue 26: under -p the agent's RunningLaunches records come as Events frames on the control
    # socket (latest only per process); a gpu:hang probe runs once for a launch past its
    # duration, even when the agent says so twice, and the process's end is no error.
    def body(fake):
        r = run(ctx, ["-p", str(fake.pid), "-e",
                      'gpu:hang:spin { printf("hung %d %s seq %d grid %d block %d exact %d\\n", '
                      'pid, kernel, args.seq, gdim_x, bdim_x, args.exact); @n = count(); }'],
                env=gpu_env(fake), timeout=60)
        want = f"hung {fake.pid} spin seq 3 grid 4 block 128 exact 1\n"
        expect(want in r.stdout and r.stdout.count("hung ") == 1 and "@n: 1" in r.stdout,
               f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    with_fake_agent("self", "hang", True, body)


@case
def p_keeps_a_launch_level_probe_on_the_gpu(ctx):
    # Issue 25: launches are timed (CUPTI) only in a process gpubt starts: an attached one's agent
    # has had the Compute Sanitizer since its start, which keeps CUPTI out. So under -p
    # kerneltime's probe stays a device probe, and -v says why.
    def body(fake):
        r = run(ctx, ["-v", "-p", str(fake.pid), os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tools/kerneltime.bt")],
                env=gpu_env(fake), timeout=60)
        expect("gpu:kretprobe:* runs on the GPU in every thread" in r.stderr and
               "not a -c run: an attached process's agent has had the Compute Sanitizer" in r.stderr,
               f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    with_fake_agent("self", "finished", True, body)


TIMING_MODE = {"GPUBT_AGENT_MODE": "timing"}  # `gpubt agent env --timing`


@case
def p_timing_agent_runs_a_launch_level_probe_in_gpubt(ctx):
    # Issue 25: a job started with its agent in timing mode times its launches with CUPTI once
    # attached, so under -p kerneltime's probe runs in gpubt from the launch records (the fake
    # sends five: vectorAdd 300, 350 and 5 us, spin 1500 us twice) and no device probe is sent.
    def body(fake):
        r = run(ctx, ["-v", "-p", str(fake.pid), os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tools/kerneltime.bt")],
                env=gpu_env(fake), timeout=60)
        expect("gpu:kretprobe:* runs in gpubt once per finished launch" in r.stderr,
               f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        want = ["@kernel_us[spin]: \n[1K, 2K)               2 |",
                "@kernel_us[vectorAdd]: \n[4, 8)                 1 |",
                "[256, 512)             2 |"]
        expect(all(w in r.stdout for w in want), f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        # kerneltime reads no launch_call: the agent is not asked for the launch calls' times.
        expect("time 1" in fake.said() and "timecalls 0" in fake.said(), fake.said())
    with_fake_agent("self", "finished", True, body, env=TIMING_MODE)


@case
def p_timing_agent_collects_call_times_only_for_launch_call(ctx):
    # launchlate reads launch_call: the agent is asked for each launch's call time (CUPTI's
    # records of the launch calls, which cost every launch and so are off for kerneltime).
    def body(fake):
        r = run(ctx, ["-p", str(fake.pid), os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tools/launchlate.bt")],
                env=gpu_env(fake), timeout=60)
        expect("timecalls 1" in fake.said(), f"{fake.said()}\n{r.stderr}")
        expect("@launch_to_start_us[vectorAdd]: \n[8, 16)" in r.stdout, r.stdout)
    with_fake_agent("self", "finished", True, body, env=TIMING_MODE)


@case
def p_timing_agent_refuses_probes_in_the_kernels(ctx):
    # The same job takes no probe that must run in its kernels, nor gpu:hang (both need the
    # Compute Sanitizer the timing agent does not load): an error at each, with its place, and
    # nothing sent to the agent.
    script = ("gpu:kprobe:* { @n = count(); }\n"
              "gpu:kretprobe:* /last_thread/ { @t[tid] = count(); }\n"
              "gpu:hang:* { @h = count(); }\n")
    def body(fake):
        r = run(ctx, ["-p", str(fake.pid), "-e", script], env=gpu_env(fake), timeout=60)
        mode = f"process {fake.pid}'s agent is in timing mode (GPUBT_AGENT_MODE=timing)"
        expect(r.returncode != 0 and r.stderr.count(mode) == 3, f"exit {r.returncode}\n{r.stderr}")
        expect("stdin:1:1-13: ERROR:" in r.stderr and "stdin:2:1-16: ERROR:" in r.stderr and
               "stdin:3:1-11: ERROR:" in r.stderr and "gpu:kprobe:* { @n" in r.stderr, r.stderr)
        expect("attach" not in fake.said(), fake.said())
    with_fake_agent("self", "finished", True, body, env=TIMING_MODE)


@case
def agent_that_left_a_module_unpatched_makes_the_exit_status_partial(ctx):
    # The agent's results say a module the probes matched ran without them (patching failed):
    # gpubt said so in a warning and exited 0, as if the trace were whole. Now 5.
    def body(fake):
        r = run(ctx, ["-p", str(fake.pid), "-e", GPU_SCRIPT + " interval:ms:100 { exit(); }"],
                env=gpu_env(fake), timeout=60)
        expect(r.returncode == 5, f"exit {r.returncode}: {r.stderr}")
        expect("sanitizerPatchModule failed" in r.stderr, r.stderr)
        expect("gpubt: partially traced: 1 module(s), kernel(s) or entry point(s) the gpu probes "
               "matched ran without them" in r.stderr, r.stderr)
    with_fake_agent("self", "partial", True, body)


@case
def gpu_printf_beside_host_probes_prints_while_tracing(ctx):
    # With a host probe in the script, the gpu probes' printf records printed only when the
    # trace ended (Ctrl-C here); now as they come, between the host probes' events.
    def body(fake):
        p = start_gpubt(ctx, ["-p", str(fake.pid), "-e",
                              'gpu:kprobe:vectorAdd { printf("hello\\n"); } '
                              f'uprobe:{ctx.programs}/spin:tick {{ @ = count(); }}'],
                        env=gpu_env(fake))
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(iter(p.stdout.readline, "")),
                                  daemon=True)
        reader.start()
        try:
            live = wait_for(lambda: "hello\n" in lines or p.poll() is not None, 30)
            expect(live and p.poll() is None,
                   f"no printf line while tracing (30 s): {lines} {fake.said()!r}")
        finally:
            p.send_signal(signal.SIGINT)
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                killed(p)
            reader.join(10)
        expect(lines.count("hello\n") == 1, f"stdout: {lines}")
    with_fake_agent("self", "printlive", True, body)


@case
def agent_frame_header_cannot_make_gpubt_allocate(ctx):
    # A header claiming a 2 GiB Refused frame is refused as such, at once: nothing allocated,
    # no wait for bytes that never come.
    def body(fake):
        r = run(ctx, ["-p", str(fake.pid), "-e", GPU_SCRIPT], env=gpu_env(fake), timeout=60)
        expect(r.returncode != 0, f"exit {r.returncode}")
        expect("more than a frame of its type may carry" in r.stderr, r.stderr)
    with_fake_agent("self", "huge", True, body)


@case
def fds_of_a_refused_frame_are_closed(ctx):
    # A process that looks like an agent's answers with 64 fds on a frame gpubt refuses: they
    # must not stay in root's fd table (a few such processes would fill it).
    def body(fake):
        p = subprocess.Popen([ctx.gpubt, "-e", GPU_SCRIPT], env=gpu_env(fake),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True, errors="replace")
        try:
            said = ""
            while f"process {fake.pid}:" not in said:
                line = p.stderr.readline()
                expect(line, f"gpubt ended before refusing the fake: {said}")
                said += line
            expect("a malformed frame" in said, said)
            held = []
            for fd in os.listdir(f"/proc/{p.pid}/fd"):
                try:
                    held.append(os.readlink(f"/proc/{p.pid}/fd/{fd}"))
                except OSError:
                    pass
            expect(fake.log not in held, f"gpubt keeps {held.count(fake.log)} fds of the fake's")
        finally:
            p.send_signal(signal.SIGINT)
            try:
                p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                killed(p)
    with_fake_agent("self", "fds", True, body)


@case
def many_socket_names_cost_no_thread_each(ctx):
    # nobody makes 40,000 socket names in a folder of its own (no process behind them): root's
    # gpubt without -p tried each on a thread of its own, ran out of threads and aborted.
    work = tempfile.mkdtemp(prefix="gpubt-flood-")
    os.chmod(work, 0o755)
    try:
        folder = nobodys_agent_folder(work)
        subprocess.run(NOBODY + ["sh", "-c", f"cd {folder} && "
                                 "seq 3000000 3040000 | sed 's/$/.sock/' | xargs touch"],
                       check=True)
        lib = os.path.join(work, "libgpubt_agent.so")
        subprocess.run(["cp", "/bin/true", lib], check=True)
        r = run(ctx, ["-e", GPU_SCRIPT + " interval:ms:300 { exit(); }"],
                env=dict(os.environ, GPUBT_AGENT_PATH=lib, GPUBT_AGENT_DIR=folder), timeout=120)
        expect(r.returncode in (0, 4), f"exit {r.returncode}: {r.stderr[-500:]}")
        expect("terminate" not in r.stderr, r.stderr[-500:])
    finally:
        subprocess.run(["rm", "-rf", work])


@case
def records_a_process_sent_before_it_ended_print(ctx):
    # The process sends a printf record and exits at once. gpubt's Detach then fails (EPIPE)
    # and it marked the process done without reading what was still in the socket: the record
    # was lost whenever gpubt saw the exit before its reader thread read the frame (a race, so
    # the case runs five times; before, about one run in three lost it).
    for _ in range(5):
        def body(fake):
            r = run(ctx, ["-p", str(fake.pid), "-e",
                          'gpu:kprobe:vectorAdd { printf("hello\\n"); }'],
                    env=gpu_env(fake), timeout=60)
            expect(r.returncode == 3, f"exit {r.returncode}: {r.stderr}")
            expect(r.stdout.count("hello\n") == 1, f"stdout: {r.stdout!r} stderr: {r.stderr}")
        with_fake_agent("self", "printexit", True, body)


@case
def agent_record_that_is_no_record_blocks_no_later_one(ctx):
    # An agent's Events frame whose record claims 0 bytes: gpubt waited for the rest of it for
    # ever, so no later record printed (another process's, without -p) and they piled up in
    # memory. The frame is left out with a warning; the next one prints.
    def body(fake):
        r = run(ctx, ["-p", str(fake.pid), "-e", 'gpu:kprobe:vectorAdd { printf("hello\\n"); }'],
                env=gpu_env(fake), timeout=60)
        expect(r.returncode == 3, f"exit {r.returncode}: {r.stderr}")
        expect(r.stdout.count("hello\n") == 1, f"stdout: {r.stdout!r} stderr: {r.stderr}")
        expect(f"process {fake.pid} sent 16 bytes that are not gpu probe records" in r.stderr,
               r.stderr)
    with_fake_agent("self", "badrecord", True, body)


@case
def results_record_that_is_no_record_takes_no_other_image_with_it(ctx):
    # The Results' ring records of every image (every process) print one after the other: a
    # record claiming 0 bytes in one image lost the records of the images after it.
    def body(fake):
        r = run(ctx, ["-p", str(fake.pid), "-e", 'gpu:kprobe:vectorAdd { printf("hello\\n"); } '
                      "interval:ms:100 { exit(); }"], env=gpu_env(fake), timeout=60)
        expect(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
        expect(r.stdout.count("hello\n") == 1, f"stdout: {r.stdout!r} stderr: {r.stderr}")
        expect("GPU results held 16 bytes that are not gpu probe records" in r.stderr, r.stderr)
    with_fake_agent("self", "badresults", True, body)


@case
def agent_records_cannot_grow_gpubt_without_bound(ctx):
    # With a host probe in the script an attached process's records printed at the end (now
    # every 200 ms, but a process may send faster than they print): until then gpubt kept all
    # of them, as many as the process sent (here 512 MiB: a peak of 700 MiB
    # and more). Past 64 MiB they are dropped and counted; what gpubt holds no longer grows with
    # what is sent (one frame of up to 32 MiB here being read, the 64 MiB kept, their copies).
    def body(fake):
        r = subprocess.run(["/usr/bin/time", "-f", "maxrss %M", ctx.gpubt, "-p", str(fake.pid),
                            "-e", 'gpu:kprobe:vectorAdd { printf("x\\n"); } '
                            f'uprobe:{ctx.programs}/spin:tick {{ @ = count(); }}'],
                           capture_output=True, text=True, errors="replace", env=gpu_env(fake),
                           stdin=subprocess.DEVNULL, timeout=120)
        # They print as they come now: dropped only when they come faster than they print.
        expect(r.returncode == 3, f"exit {r.returncode}: {r.stderr[-500:]}")
        rss_mib = int(r.stderr.rsplit("maxrss ", 1)[1].split()[0]) >> 10
        expect(rss_mib < 320, f"peak RSS {rss_mib} MiB for 512 MiB sent")
    with_fake_agent("self", "flood", True, body)


@case
def kernel_names_reach_the_terminal_escaped(ctx):
    # A kernel's name is the traced program's (cuModuleGetFunction's argument): kname() in a map
    # key and in printf("%s") printed it raw, escape sequences and all.
    name = "\x1b]0;owned\x07\x1bc"
    r = run(ctx, ["-e", "host:uprobe:cuda:cuLaunchKernel { @k[kname(args.f)] = count(); "
                  'printf("launch %s\\n", kname(args.f)); }',
                  "-c", f"{ctx.programs}/fake_cu_calls '{name}'"], timeout=60)
    expect(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
    expect("\x1b" not in r.stdout and "\x07" not in r.stdout,
           f"raw escapes printed: {r.stdout!r}")
    expect("@k[\\x1b]0;owned\\x07\\x1bc]: 1\n" in r.stdout, repr(r.stdout))
    expect("launch \\x1b]0;owned\\x07\\x1bc\n" in r.stdout, repr(r.stdout))


# --- issue 23: -p says how its process ended, as -c does

def check_p_reports_end(ctx, argv, script, end, expected, wrapper=(), ready=None):
    """gpubt -p on ARGV's process (once READY(pid) holds, if given) with SCRIPT; END(process)
    ends it once probes are attached; gpubt must then print EXPECTED (with the pid for {pid})
    and exit 3, as with -c. Returns gpubt's stderr."""
    target = subprocess.Popen(argv, stdin=subprocess.PIPE)
    try:
        if ready:
            expect(wait_for(lambda: ready(target.pid), 20), "the process did not get ready")
        p = subprocess.Popen(list(wrapper) + [ctx.gpubt, "-p", str(target.pid), "-e", script],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True, errors="replace")
        expect(wait_attached(p), "gpubt did not attach")
        end(target)
        out, err = p.communicate(timeout=20)
        expect(p.returncode == 3, f"exit {p.returncode}: {err}")
        expect(expected.format(pid=target.pid) + "\n" in err, repr(err))
        return err
    finally:
        killed(target)


def send_line(process):
    """Ends `sh -c "read x; exit 3"`."""
    process.stdin.write(b"go\n")
    process.stdin.flush()


@case
def p_process_killed_by_sigkill_is_reported(ctx):
    spin = f"{ctx.programs}/spin"
    check_p_reports_end(ctx, [spin, "60"], f"uprobe:{spin}:tick {{ @ = count(); }}",
                        lambda t: t.kill(), "gpubt: spin (pid {pid}) was killed by SIGKILL")


@case
def p_process_exit_status_is_reported(ctx):
    check_p_reports_end(ctx, ["sh", "-c", "read x; exit 3"],
                        "tracepoint:syscalls:sys_enter_getppid { @ = count(); }", send_line,
                        "gpubt: sh (pid {pid}) exited with status 3")


@case
def p_process_name_reaches_the_terminal_escaped(ctx):
    # The name in "NAME (pid N) exited" is the process's comm, which it sets itself: another
    # user's process named itself with terminal escapes, which root's gpubt printed raw.
    name = "\x1b]0;owned\x07\x1b[2J"
    code = ("import sys; open('/proc/self/comm', 'w').write(sys.argv[1]); "
            "sys.stdin.readline(); sys.exit(3)")
    err = check_p_reports_end(ctx, NOBODY + ["/usr/bin/python3", "-c", code, name],
                              "tracepoint:syscalls:sys_enter_getppid { @ = count(); }", send_line,
                              "gpubt: \\x1b]0;owned\\x07\\x1b[2J (pid {pid}) exited with status 3",
                              ready=lambda pid: _comm(pid) == name)
    expect("\x1b" not in err and "\x07" not in err, f"raw escapes printed: {err!r}")


def _comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().rstrip("\n")
    except OSError:
        return None


@case
def p_process_end_without_cap_net_admin_is_said_so(ctx):
    # Without CAP_NET_ADMIN the proc connector takes no listener: the end is still reported.
    check_p_reports_end(ctx, ["sh", "-c", "read x; exit 3"],
                        "tracepoint:syscalls:sys_enter_getppid { @ = count(); }", send_line,
                        "gpubt: sh (pid {pid}) ended; its exit status is not known "
                        "(the proc connector needs root: CAP_NET_ADMIN)",
                        ["setpriv", "--bounding-set", "-net_admin", "--inh-caps", "-net_admin"])


@case
def p_gpu_attached_process_exit_status_is_reported(ctx):
    # The gpu-only -p path (runtime/run/tracer.cpp, set_up_gpu_attached) says it the same way:
    # the process here plays an agent that answers Attached and exits 3.
    def body(fake):
        r = run(ctx, ["-p", str(fake.pid), "-e", GPU_SCRIPT], env=gpu_env(fake), timeout=60)
        expect(r.returncode == 3, f"exit {r.returncode}: {r.stderr}")
        expect(f"gpubt: python3 (pid {fake.pid}) exited with status 3\n" in r.stderr, r.stderr)
    with_fake_agent("self", "exit3", True, body)

if __name__ == "__main__":
    sys.exit(run_main("--programs"))
