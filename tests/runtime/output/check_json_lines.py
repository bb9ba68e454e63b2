#!/usr/bin/env python3
"""Checks -f json lines with Python's json module: usage check_json_lines.py JSON HEX.

JSON holds, for each input string in HEX (one hex string a line), three lines: printf("<%s>\n"),
print(str) and a map keyed by the string. Each must parse, and decode to the input read as
gpubt states: well-formed UTF-8 as itself, any other byte as the code point of its value."""
import json
import sys


def expected(raw):
    text = raw.decode("utf-8", "surrogateescape")
    return "".join(chr(ord(c) - 0xDC00) if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)


inputs = [bytes.fromhex(h) for h in open(sys.argv[2]).read().split()]
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert len(lines) == 3 * len(inputs), (len(lines), len(inputs))
for i, raw in enumerate(inputs):
    printf, value, map_line = (json.loads(line) for line in lines[3 * i:3 * i + 3])
    want = expected(raw)
    assert printf["data"] == "<" + want + ">\n", (raw, printf)
    assert value["data"] == want, (raw, value)
    assert list(map_line["data"]["@s"]) == [want], (raw, map_line)
print(f"{len(lines)} lines parse and decode as stated")
