"""Calls gpubt_py_mark(id) (libpymark.so, through ctypes) from the main interpreter before and
after it made a subinterpreter, and from code running in that subinterpreter (on the same
thread: the thread then has a state in each interpreter); appends what the traceback module
says the stack was at each call to OUT, a JSON line {id: [[file, line, function], ...] outermost
first} per call.
Usage: subinterp.py LIBPYMARK OUT"""
import ctypes
import sys

try:
    import _interpreters as interpreters  # 3.13
except ImportError:
    import _xxsubinterpreters as interpreters

SEEN = '''
import ctypes, json, traceback
def mark(lib, out, i):  # one line: the traceback, then the call gpubt probes
    stack = [[f.filename, f.lineno, f.name] for f in traceback.extract_stack()]; lib.gpubt_py_mark(i)
    with open(out, "a") as f:
        f.write(json.dumps({i: stack}) + "\\n")
'''
exec(SEEN)
lib, out = ctypes.CDLL(sys.argv[1]), sys.argv[2]


def main_side(i):
    mark(lib, out, i)


main_side(1)
try:
    sub = interpreters.create(isolated=False)  # 3.12: isolated ones cannot load _ctypes
except TypeError:
    sub = interpreters.create()
main_side(2)
# The code run_string runs is freed when it returns, and printf's stacks are named when gpubt
# prints them: the subinterpreter keeps it until the process finalizes (gpubt holds it there).
interpreters.run_string(sub, SEEN + f'''
import sys
sys.keep = sys._getframe().f_code
lib = ctypes.CDLL({sys.argv[1]!r})
def sub_side(i):
    mark(lib, {out!r}, i)
sub_side(3)
''')
main_side(4)
