"""Where a trainer's main thread (the one that launches the kernels) runs, for the cost rows of
tests/gpu/attach_suite.py: two trainers compared burst against burst must launch from the same
CPU, or the CPU, not the agent, is measured (H200, 2026-11-29: A/P per round either ~1.005 or
1.1-1.2 for several rounds in a row, P steady, both processes on CPUs 2-5)."""
import os
import threading
import time


def pin_main_thread(cpu):
    """The calling (main) thread and PyTorch's autograd device threads (they launch the backward
    pass's kernels while the main thread waits) on CPU alone, every other thread of the process
    on the rest of the process's CPUs. Threads started later inherit their starter's CPUs."""
    rest = os.sched_getaffinity(0) - {cpu}
    me = str(threading.get_native_id())
    for tid in os.listdir('/proc/self/task'):
        try:
            name = open(f'/proc/self/task/{tid}/comm').read().strip()
            launcher = tid == me or name.startswith('pt_autograd')
            if launcher or rest:
                os.sched_setaffinity(int(tid), {cpu} if launcher else rest)
        except OSError:  # ended meanwhile
            pass


def counters():
    """(the CPU the calling thread last ran on, its involuntary context switches so far)."""
    stat = open('/proc/thread-self/stat').read()
    cpu = int(stat[stat.rindex(')') + 2:].split()[36])
    switches = next(int(l.split()[1]) for l in open('/proc/thread-self/status')
                    if l.startswith('nonvoluntary_ctxt_switches:'))
    return cpu, switches


def launcher_cpu_ns():
    """CPU time so far of the calling (main) thread and PyTorch's autograd threads, the ones that
    launch (the scheduler's count, /proc/*/schedstat, in ns), and of the whole process: a burst's
    difference says whether the agent made the launching itself dearer or the process did more."""
    # (The calling thread's own clock: the scheduler's count of a running thread lags a tick.)
    me = str(threading.get_native_id())
    launching = time.thread_time_ns()
    for tid in os.listdir('/proc/self/task'):
        try:
            name = open(f'/proc/self/task/{tid}/comm').read().strip()
            if tid != me and name.startswith('pt_autograd'):
                launching += int(open(f'/proc/self/task/{tid}/schedstat').read().split()[0])
        except OSError:  # ended meanwhile
            pass
    return launching, time.process_time_ns()
