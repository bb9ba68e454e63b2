"""Calls the native gpubt_py_mark(id) (libpymark.so, through ctypes, which releases the GIL
around the call) along known Python call paths, and writes what the traceback module says the
stack was at each call: {id: [[file, line, function], ...] outermost first}.
Usage: calls.py LIBPYMARK OUT.json"""
import ctypes
import json
import sys
import threading
import traceback

lib = ctypes.CDLL(sys.argv[1])
expected = {}


def mark(i):
    # One line: the traceback is taken at the line of the call gpubt probes.
    expected[i] = [[f.filename, f.lineno, f.name] for f in traceback.extract_stack()]; lib.gpubt_py_mark(i)


def inner(i):
    mark(i)


def outer(i):
    inner(i)


class Model:
    def forward(self, i):
        return self.step(i)

    def step(self, i):
        mark(i)


def recurse(depth, i):
    if depth == 0:
        mark(i)
    else:
        recurse(depth - 1, i)


def gen(i):
    mark(i)
    yield i


def größe(i):  # a non-ASCII name: a compact UCS-1 string in CPython
    mark(i)


outer(1)
Model().forward(2)
recurse(5, 3)
list(gen(4))
list(map(mark, [5]))  # a C function between Python frames (3.12+: a shim frame)
(lambda i: mark(i))(6)
größe(7)
t = threading.Thread(target=outer, args=(8,))
t.start()
t.join()
recurse(60, 9)  # deeper than a pystack holds

with open(sys.argv[2], "w") as f:
    json.dump(expected, f)
