"""The transformer training step of train_transformer.py as a long-lived job that gpubt attaches
to: it trains only when told on stdin ('burst N': N steps; 'quit'), so a test knows which steps ran
while gpubt was attached. Prints 'ready PID' once CUDA is up (--hold: 'cuda PID' first, with CUDA initialized and nothing
launched yet, then waits for a line; --compile: the step torch.compile'd), then per burst
'burst I ms MEDIAN_STEP_MS mean MEAN_STEP_MS losses HEX,...' (CUDA events around every step;
losses as float hex, bit-comparable; then `cpu C preempted N`: the CPU the main thread was last on,
its involuntary context switches in the burst; then `work_us L P`: CPU us a step of the
launching threads and of the whole process, main_thread.launcher_cpu_ns). TRAIN_MAIN_CPU=C: after the first burst, the
threads that launch (main, autograd) run on CPU C alone, every other one elsewhere
(main_thread.py)."""
import os, sys
from main_thread import counters, launcher_cpu_ns, pin_main_thread
from transformer_step import make_step, torch

if '--hold' in sys.argv:  # CUDA up (the agent listening), nothing launched: wait for a line
    torch.cuda.init()
    print('cuda', os.getpid(), flush=True)
    sys.stdin.readline()
step = make_step()
if '--compile' in sys.argv:
    step = torch.compile(step)
torch.cuda.synchronize()
print('ready', os.getpid(), flush=True)
for i, line in enumerate(sys.stdin):
    words = line.split()
    if not words or words[0] != 'burst':
        break
    n = int(words[1])
    marks = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    torch.cuda.synchronize()
    switches = counters()[1]
    work = launcher_cpu_ns()
    marks[0].record()
    losses = []
    for k in range(n):
        losses.append(step())
        marks[k + 1].record()
    torch.cuda.synchronize()
    # The median step: a stretch where the host was busy elsewhere (seen on the GPU machines:
    # bursts 0.75-1.5x of their neighbours) moves the mean of a burst, rarely its median.
    steps = sorted(marks[k].elapsed_time(marks[k + 1]) for k in range(n))
    cpu, now = counters()
    work = [(b - a) / n / 1000 for a, b in zip(work, launcher_cpu_ns())]
    print(f'burst {i} ms {steps[n // 2]:.4f} mean {marks[0].elapsed_time(marks[n]) / n:.4f} '
          'losses ' + ','.join(l.item().hex() for l in losses) +
          f' cpu {cpu} preempted {now - switches} work_us {work[0]:.1f} {work[1]:.1f}', flush=True)
    if i == 0 and os.environ.get('TRAIN_MAIN_CPU'):
        # After the first burst: torch.compile's compiles (and their workers) have run on the
        # process's CPUs, and the autograd threads exist.
        pin_main_thread(int(os.environ['TRAIN_MAIN_CPU']))
