"""For pystack with -p: waits until the file GO exists (gpubt has attached), then calls the native
gpubt_py_mark(id) (libpymark.so, through ctypes) from a function made by exec() and dropped
right after (its code object is freed before the process ends), and from one that lives until
the interpreter finalizes; the main module's code object is freed once it has run, before that.
Writes what the traceback module says the stack was at each call: {id: [[file, line, function],
...] outermost first}.
Usage: freed.py LIBPYMARK GO OUT.json"""
import ctypes
import gc
import json
import os
import sys
import time
import traceback

lib = ctypes.CDLL(sys.argv[1])
expected = {}


def seen(i):  # the caller's stack, its line the call's
    expected[i] = [[f.filename, f.lineno, f.name] for f in traceback.extract_stack()[:-1]]


while not os.path.exists(sys.argv[2]):
    time.sleep(0.01)
ns = {}
exec(compile("def gone(lib, seen):\n    seen(1); lib.gpubt_py_mark(1)\n", "<generated>", "exec"), ns)
ns["gone"](lib, seen)
del ns
gc.collect()


def kept():
    seen(2); lib.gpubt_py_mark(2)


kept()
with open(sys.argv[3], "w") as f:
    json.dump(expected, f)
