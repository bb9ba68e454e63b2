"""Reads bpftrace's runtime test case files (tests/runtime/SUITE of a bpftrace checkout) in either of
their two formats, and picks the cases that test the language alone.

- bpftrace 0.17 (tag v0.17.0): one EXPECT per case, a regular expression searched in the output;
  one BEFORE; WILL_FAIL.
- bpftrace at its head (engine/parser.py there names EXPECT_REGEX): EXPECT matches one whole
  line as text (surrounding blanks ignored), EXPECT_NONE/EXPECT_REGEX/EXPECT_REGEX_NONE/
  EXPECT_FILE/EXPECT_JSON, several of them and several BEFOREs per case, RETURN_CODE, SETUP/
  CLEANUP, SKIP_IF_ENV_HAS, NEW_PIDNS, LOCALIZE_TIMESTAMPS, and PROG/EXPECT lines continued on the
  next lines by indentation as deep as the directive's name and one blank.

Every case comes back as one dict with `expects`, a list of (mode, text), mode one of text,
text_none, regex, regex_none, file, json.
"""
import os
import platform
import re
import sys

FIELDS_017 = {"NAME", "RUN", "PROG", "EXPECT", "TIMEOUT", "BEFORE", "AFTER", "MIN_KERNEL",
              "MAX_KERNEL", "REQUIRES", "ENV", "ARCH", "REQUIRES_FEATURE", "WILL_FAIL"}
EXPECT_MODES = {"EXPECT": "text", "EXPECT_NONE": "text_none", "EXPECT_REGEX": "regex",
                "EXPECT_REGEX_NONE": "regex_none", "EXPECT_FILE": "file", "EXPECT_JSON": "json"}
FIELDS_HEAD = (FIELDS_017 | set(EXPECT_MODES) | {"SETUP", "CLEANUP", "NEW_PIDNS", "SKIP_IF_ENV_HAS",
                                                 "RETURN_CODE", "LOCALIZE_TIMESTAMPS"})

# The suites issue 29 measures: those about the language rather than a kind of probe.
LANGUAGE_SUITES = {"basic", "for", "variable", "record", "tuples", "bool", "macro", "map", "call",
                   "array", "builtin", "precedence", "signed_ints", "config", "stdlib"}


def checkout_format(runtime_dir):
    """'head' when the checkout's own runner reads the newer format, else '0.17'."""
    parser = os.path.join(runtime_dir, "engine", "parser.py")
    if os.path.exists(parser) and "EXPECT_REGEX" in open(parser, encoding="utf-8").read():
        return "head"
    return "0.17"


def new_case(suite):
    return {"suite": suite, "requires": [], "features": [], "env": {}, "arch": [],
            "will_fail": False, "run": "", "prog": "", "befores": [], "after": "", "setup": "",
            "cleanup": "", "min_kernel": "", "max_kernel": "", "expects": [], "return_code": 0,
            "skip_if_env_has": None, "new_pidns": False, "localize_ts": -1}


def make_case(block, suite, path, fmt):
    c = new_case(suite)
    fields = FIELDS_HEAD if fmt == "head" else FIELDS_017
    prev = ""
    for item in block:
        # head: a PROG or EXPECT continued on the next line, indented past its directive's name
        if fmt == "head" and prev and item[:len(prev) + 1].isspace():
            rest = item[len(prev) + 1:]
            if prev == "PROG":
                c["prog"] += "\n" + rest
                continue
            if prev in ("EXPECT", "EXPECT_REGEX"):
                mode, text = c["expects"][-1]
                c["expects"][-1] = (mode, text + "\n" + rest)
                continue
        parts = item.strip().split(maxsplit=1)
        key, value = parts[0], (parts[1] if len(parts) > 1 else "")
        prev = key
        if fmt == "0.17":
            value = " ".join(item.split()[1:])
        if key not in fields:
            raise SystemExit(f"{path}: unknown field {key}")
        if key == "REQUIRES":
            c["requires"].append(value)
        elif key == "REQUIRES_FEATURE":
            c["features"] += value.split()
        elif key == "ENV":
            c["env"].update(kv.split("=", 1) for kv in value.split())
        elif key == "ARCH":
            c["arch"] = [a.strip() for a in value.split("|")]
        elif key == "WILL_FAIL":
            c["will_fail"] = True
        elif key == "NEW_PIDNS":
            c["new_pidns"] = True
        elif key == "TIMEOUT":
            c["timeout"] = int(value)
        elif key == "RETURN_CODE":
            c["return_code"] = int(value)
        elif key == "LOCALIZE_TIMESTAMPS":
            c["localize_ts"] = int(value)
        elif key == "SKIP_IF_ENV_HAS":
            c["skip_if_env_has"] = tuple(value.split("=", 1))
        elif key == "BEFORE":
            c["befores"].append(value)
        elif key in EXPECT_MODES:
            # 0.17's EXPECT is a regular expression; head's is a whole line of text.
            c["expects"].append(("regex" if fmt == "0.17" else EXPECT_MODES[key], value))
        else:
            c[key.lower()] = value
    c["id"] = f"{suite}.{c['name']}"
    return c


def arch_matches(arch):
    """ARCH x86_64|aarch64, and at head also !arch and be/le."""
    if not arch:
        return True
    host = {platform.machine().lower(), "be" if sys.byteorder == "big" else "le"}
    pos = {a for a in arch if not a.startswith("!")}
    neg = {a[1:] for a in arch if a.startswith("!")}
    return (not pos or bool(host & pos)) and not (host & neg)


def parse_file(path, suite, fmt):
    cases, block = [], []
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if line.startswith("#"):
            continue
        if line.strip():
            block.append(line)
        if (not line.strip() or i == len(lines) - 1) and block:
            cases.append(make_case(block, suite, path, fmt))
            block = []
    return [c for c in cases if arch_matches(c["arch"])]


def read_cases(runtime_dir):
    fmt = checkout_format(runtime_dir)
    cases = []
    for root, dirs, files in os.walk(runtime_dir):
        dirs[:] = sorted(d for d in dirs if d not in ("engine", "scripts", "outputs"))
        for f in sorted(files):
            if not f.startswith("."):
                cases += parse_file(os.path.join(root, f), f, fmt)
    return cases, fmt


def strip_strings_and_comments(text):
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def top_level_headers(prog):
    """The text before each top-level `{`: probe lists (with predicates), macro/fn heads,
    `config =`, struct definitions. Preprocessor lines and top-level statements ending in `;`
    (`let @m = ...;`, `import ...;`) are not headers."""
    text = "\n".join(l for l in strip_strings_and_comments(prog).split("\n")
                     if not l.lstrip().startswith("#"))
    headers, depth, cur = [], 0, ""
    for ch in text:
        if depth == 0:
            if ch == "{":
                headers.append(cur.strip())
                cur = ""
            elif ch == ";":
                cur = ""
            else:
                cur += ch
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
    return headers


LANGUAGE_PROBE = re.compile(r"^(begin|end|BEGIN|END|(interval|i):[a-z]*:?\d+[a-z]*)$")
OTHER_PROBE = re.compile(r"(^|[\s{};'])(t|tracepoint|k|kr|kprobe|kretprobe|u|ur|uprobe|uretprobe|"
                         r"usdt|U|f|fr|fentry|fexit|kfunc|kretfunc|rt|rawtracepoint|p|profile|"
                         r"s|software|h|hardware|w|watchpoint|it|iter):[a-zA-Z_*./]")
NOT_A_PROBE = re.compile(r"^(macro|fn|config|struct|union|enum)\b")


def case_program(case, runtime_dir):
    """The script a case runs, or None where its RUN line is not `bpftrace [-e] PROGRAM`."""
    if case["prog"]:
        return case["prog"]
    run = case["run"]
    m = re.search(r"-e\s+'([^']*)'", run) or re.search(r'-e\s+"([^"]*)"', run)
    if m:
        return m.group(1)
    m = re.search(r"(runtime/scripts/\S+\.bt)", run)
    if m:
        path = os.path.join(runtime_dir, m.group(1)[len("runtime/"):])
        return open(path, encoding="utf-8").read() if os.path.exists(path) else None
    return None


def is_language_case(case, runtime_dir):
    """A case of a language suite whose program only needs begin, end and interval probes, and
    which starts no other process (no BEFORE, AFTER, -c, -p, -l)."""
    if case["suite"] not in LANGUAGE_SUITES or case["befores"] or case["after"]:
        return False
    if re.search(r"(^|\s)(-c|--cmd|-p|--pid|-l\w*|--list)(\s|$)", case["run"]):
        return False
    if OTHER_PROBE.search(case["run"]):  # where quoting hides part of an -e program
        return False
    prog = case_program(case, runtime_dir)
    if prog is None:
        return False
    headers = top_level_headers(prog)
    if not headers:
        return False
    for header in headers:
        if NOT_A_PROBE.match(header) or header.endswith("="):
            continue
        probes = header.split("/")[0]  # drop a predicate
        for probe in probes.split(","):
            probe = probe.strip()
            if probe and not LANGUAGE_PROBE.match(probe):
                return False
    return True
