#!/usr/bin/env python3
"""Differential suite: each tests/e2e/differential/*.bt runs under bpftrace 0.17 and gpubt with
the same arguments; their standard output and exit status must be equal, and where bpftrace
fails, so must gpubt, with the same diagnostics. Map entries whose values tie may come
out in any order (bpftrace's order among ties follows its hash map), so ties compare as sets.

`{programs}` in a script is replaced before it runs. A script's first lines may hold `// ARGS: ...` (gpubt/bpftrace arguments; {programs} is the
folder of the built test programs), `// PARAMS: ...` (words after the script: $1, $2, ...),
`// ENV: KEY=VALUE ...` (set for both tools) and `// TIMEOUT: seconds`.
"""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

ENTRY = re.compile(r"^(@[A-Za-z0-9_]*)(\[.*\])?: ?(.*)$")


def header(path, key, default):
    for line in open(path, encoding="utf-8"):
        m = re.match(rf"//\s*{key}:\s*(.*)", line)
        if m:
            return m.group(1).strip()
    return default


def canonical(text):
    """Splits output into blocks; sorts runs of tied map entries within each map."""
    lines = [l for l in text.splitlines() if not l.startswith("Attaching ")]
    out, i = [], 0
    while i < len(lines):
        m = ENTRY.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        name, entries = m.group(1), []
        while i < len(lines):
            m = ENTRY.match(lines[i])
            if not m or m.group(1) != name:
                break
            entry = [lines[i]]
            i += 1
            if m.group(3) == "":  # hist/lhist: bars until a blank line
                while i < len(lines) and lines[i] != "":
                    entry.append(lines[i])
                    i += 1
                while i < len(lines) and lines[i] == "" and i + 1 < len(lines) and \
                        ENTRY.match(lines[i + 1]) and ENTRY.match(lines[i + 1]).group(1) == name:
                    i += 1
            entries.append((m.group(3), entry))
        # Group runs of equal values; multi-line entries (hists) all compare as one set.
        j = 0
        while j < len(entries):
            k = j
            while k < len(entries) and entries[k][0] == entries[j][0]:
                k += 1
            for _, e in sorted(entries[j:k], key=lambda x: x[1]):
                out.extend(e)
            j = k
    return "\n".join(out).strip("\n")


def errors(stderr):
    """A failed run's diagnostics, without bpftrace's unrelated RLIMIT_MEMLOCK complaint."""
    return [l for l in stderr.splitlines() if "RLIMIT_MEMLOCK" not in l]


def run(tool, script, args, timeout, params="", env_vars=""):
    cmd = [tool] + shlex.split(args) + [script] + shlex.split(params)
    env = dict(os.environ)
    env.update(kv.split("=", 1) for kv in shlex.split(env_vars))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           errors="replace", stdin=subprocess.DEVNULL, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return "timeout", e.stdout or "", e.stderr or ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpubt", required=True)
    ap.add_argument("--bpftrace", default="bpftrace")
    ap.add_argument("--programs", required=True)
    ap.add_argument("dir")
    a = ap.parse_args()
    passed = failed = 0
    for script in sorted(glob.glob(os.path.join(a.dir, "*.bt"))):
        name = os.path.basename(script)
        args = header(script, "ARGS", "").replace("{programs}", a.programs)
        timeout = float(header(script, "TIMEOUT", "20"))
        with tempfile.NamedTemporaryFile("w", suffix=".bt", delete=False) as tmp:
            tmp.write(open(script, encoding="utf-8").read().replace("{programs}", a.programs))
        params = header(script, "PARAMS", "")
        env_vars = header(script, "ENV", "")
        want = run(a.bpftrace, tmp.name, args, timeout, params, env_vars)
        got = run(a.gpubt, tmp.name, args, timeout, params, env_vars)
        os.unlink(tmp.name)
        same_errors = want[0] == 0 or errors(want[2]) == errors(got[2])
        if want[0] == got[0] and canonical(want[1]) == canonical(got[1]) and same_errors:
            passed += 1
            print(f"[PASS] {name}")
            continue
        failed += 1
        print(f"[FAIL] {name}: exit bpftrace={want[0]} gpubt={got[0]}")
        print("  --- bpftrace\n  " + canonical(want[1]).replace("\n", "\n  "))
        print("  --- gpubt\n  " + canonical(got[1]).replace("\n", "\n  "))
        if not same_errors:
            print("  --- bpftrace stderr\n  " + "\n  ".join(errors(want[2])))
        if got[2].strip():
            print("  --- gpubt stderr\n  " + got[2].strip().replace("\n", "\n  "))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
