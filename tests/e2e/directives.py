"""Reads gpubt's end-to-end test files: blocks of `KEY value` lines separated by blank lines.

Keys: NAME, PROG (the script, one line), ARGS (extra gpubt arguments), EXPECT (a line that must
appear verbatim), EXPECT_REGEX, EXPECT_NONE (a line that must not appear), EXPECT_EXIT (status,
default 0; gpubt's statuses are in runtime/run/exit_codes.h), STDERR (a line that must appear on stderr),
STDERR_REGEX, STDERR_REGEX_NONE (a regex no stderr line may match), TIMEOUT (seconds, default 10),
SIGINT_AFTER (seconds after which gpubt gets SIGINT, as Ctrl-C would send),
BACKGROUND (a command started before gpubt and killed after; `{bgpid}` is its pid),
REQUIRES (a shell command that must succeed, else the test is skipped), ENV (KEY=VALUE set in
gpubt's environment, which a -c child inherits), STDIN (a line fed to gpubt's standard input;
several STDIN lines make several lines; without any stdin is /dev/null), PARAMS (words after the script: $1..).
`{programs}` in PROG/ARGS/REQUIRES/ENV is the folder of the built test programs.
"""
import re

MULTI = {"EXPECT", "EXPECT_REGEX", "EXPECT_NONE", "STDERR", "STDERR_REGEX", "STDERR_REGEX_NONE",
         "REQUIRES", "ENV", "STDIN"}


def parse_cases(path):
    cases, cur = [], {}
    for lineno, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.rstrip("\n")
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur:
                cases.append(cur)
                cur = {}
            continue
        key, _, value = line.partition(" ")
        if key in MULTI:
            cur.setdefault(key, []).append(value)
        elif key in {"NAME", "PROG", "ARGS", "EXPECT_EXIT", "TIMEOUT", "SIGINT_AFTER", "BACKGROUND",
                     "PARAMS"}:
            cur[key] = value
        else:
            raise SystemExit(f"{path}:{lineno}: unknown directive {key}")
        cur.setdefault("FILE", f"{path}:{lineno}")
    if cur:
        cases.append(cur)
    return cases
