#!/usr/bin/env python3
"""Whole-pipeline mutation fuzzer: mutates seed scripts and runs `gpubt --dry-run` on each (parse,
resolve, check, lower to LLVM IR, BPF and PTX code generation; nothing is loaded). A finding is
a sanitizer report, a signal, an exit status other than 0 (compiled) or 1 (a diagnosed error), a
"BUG:" line, an uncaught exception, an LLVM error that reached the user (no place in the script),
or a run longer than --timeout. Run it through scripts/fuzz-pipeline.sh, on an ASan+UBSan build."""
import argparse
import glob
import hashlib
import os
import random
import subprocess
import sys
import tempfile
import time

# Fragments the mutator splices in: the language's words, its limits and numbers at the edges.
TOKENS = [
    "BEGIN", "END", "uprobe:/bin/true:main", "uretprobe:/bin/true:main", "tracepoint:sched:sched_switch",
    "interval:ms:1", "interval:s:1", "gpu:kprobe:k", "gpu:kretprobe:k", "host:uprobe:cudart:cudaMalloc",
    "{", "}", "(", ")", "[", "]", "<", ">", ";", ",", "/", "?", ":", "!", "~", "-", "+", "*", "%",
    "&", "|", "^", "<<", ">>", "&&", "||", "==", "!=", "<=", ">=", "=", "+=", "++", "--", ".", "->",
    "@", "@x", "@x[1]", "@x[1, \"a\"]", "$x", "$1", "$#", "arg0", "arg9", "retval", "pid", "tid",
    "comm", "nsecs", "elapsed", "cpu", "probe", "func", "ustack", "kstack", "args.size", "args.kind",
    "count()", "sum(1)", "avg(1)", "min(1)", "max(1)", "stats(1)", "hist(1)", "lhist(1, 0, 100, 10)",
    "lhist(1, 0, 1000000000000, 1)", "printf(\"%d %s\\n\", 1, \"a\")", "printf(\"%2147483647d\", 1)",
    "print(@x)", "clear(@x)", "zero(@x)", "delete(@x[1])", "exit()", "str(arg0)", "str(arg0, 8)",
    "kname(arg0)", "deref(arg0)", "usym(arg0)", "time(\"%H\")", "if (1) { }", "else", "if",
    "(int8)", "(uint64)", "(int32)", "0", "1", "-1", "255", "4294967296", "9223372036854775807",
    "-9223372036854775808", "18446744073709551615", "99999999999999999999999", "0x7f", "\"\"",
    "\"a\"", "\"%s\"", "\"\\x00\"", "tid % 0", "1 / 0", "1 << 64", "$x = 1;", "@y = $x;",
]


def mutate(data, seeds, rnd):
    data = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        op = rnd.randrange(7)
        pos = rnd.randint(0, len(data))
        if op == 0 and data:  # flip a byte
            data[rnd.randrange(len(data))] = rnd.randrange(256)
        elif op == 1:  # insert a token
            data[pos:pos] = (" " + rnd.choice(TOKENS) + " ").encode()
        elif op == 2 and data:  # delete a span
            end = min(len(data), pos + rnd.randint(1, 16))
            del data[pos:end]
        elif op == 3 and data:  # duplicate a span, often many times (depth, size)
            start = rnd.randrange(len(data))
            span = data[start:start + rnd.randint(1, 24)]
            data[pos:pos] = span * rnd.choice([1, 2, 16, 300, 3000])
        elif op == 4:  # splice another seed
            other = rnd.choice(seeds)
            cut = rnd.randint(0, len(other))
            data = data[:pos] + other[cut:cut + rnd.randint(1, 200)] + data[pos:]
        elif op == 5 and data:  # replace a number-ish byte run with an edge number
            data[pos:pos + rnd.randint(0, 3)] = rnd.choice(TOKENS[-23:-4]).encode()
        else:  # insert a probe
            data += ("\n" + rnd.choice(TOKENS[:10]) + " { " + rnd.choice(TOKENS) + "; }\n").encode()
    return bytes(data[:256 * 1024])


def classify(r, stderr):
    if "AddressSanitizer" in stderr or "runtime error:" in stderr or "LeakSanitizer" in stderr:
        return "sanitizer"
    if r < 0:
        return f"signal {-r}"
    if r not in (0, 1):
        return f"exit {r}"
    if "BUG:" in stderr:
        return "BUG"
    if "terminate called" in stderr:
        return "exception"
    if any(line.startswith("error: ") or "LLVM ERROR" in line for line in stderr.splitlines()):
        return "llvm error"  # LLVM's own words, with no place in the script
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpubt", required=True)
    ap.add_argument("--seconds", type=float, default=180)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--findings", required=True)
    ap.add_argument("--seeds", action="append", default=[])
    ap.add_argument("--seed", type=int, default=None)
    a = ap.parse_args()
    seeds = []
    for d in a.seeds:
        for f in sorted(glob.glob(os.path.join(d, "*.bt"))):
            seeds.append(open(f, "rb").read())
    if not seeds:
        sys.exit("no seeds")
    os.makedirs(a.findings, exist_ok=True)
    rnd = random.Random(a.seed)
    env = dict(os.environ,
               ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    start, execs, found, seen = time.time(), 0, 0, set()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "input.bt")
        while time.time() - start < a.seconds:
            data = mutate(rnd.choice(seeds), seeds, rnd)
            with open(path, "wb") as f:
                f.write(data)
            try:
                p = subprocess.run([a.gpubt, "--dry-run", path], capture_output=True,
                                   timeout=a.timeout, stdin=subprocess.DEVNULL)
                kind = classify(p.returncode, p.stderr.decode("utf-8", "replace"))
                detail = p.stderr.decode("utf-8", "replace")[-2000:]
            except subprocess.TimeoutExpired:
                kind, detail = "timeout", ""
            execs += 1
            if kind:
                digest = hashlib.sha1(data).hexdigest()[:12]
                key = (kind, detail.splitlines()[0] if detail else "")
                with open(os.path.join(a.findings, f"{kind.replace(' ', '_')}-{digest}.bt"), "wb") as f:
                    f.write(data)
                with open(os.path.join(a.findings, f"{kind.replace(' ', '_')}-{digest}.txt"), "w") as f:
                    f.write(detail)
                found += 1
                if key not in seen:
                    seen.add(key)
                    print(f"[{kind}] {digest}: {key[1][:200]}", flush=True)
    secs = time.time() - start
    print(f"{execs} executions in {secs:.0f} s ({execs / secs:.1f}/s), {found} findings "
          f"({len(seen)} distinct)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
