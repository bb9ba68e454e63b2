"""The transformer training step of train_transformer.py as a long-lived job that gpubt attaches
to: it trains only when told on stdin ('burst N': N steps; 'quit'), so a test knows which steps ran
while gpubt was attached. Prints 'ready PID' once CUDA is up (--hold: 'cuda PID' first, with CUDA initialized and nothing
launched yet, then waits for a line), then per burst
'burst I ms MEAN_STEP_MS losses HEX,...' (CUDA events; losses as float hex, bit-comparable)."""
import os, sys
from transformer_step import make_step, torch

if '--hold' in sys.argv:  # CUDA up (the agent listening), nothing launched: wait for a line
    torch.cuda.init()
    print('cuda', os.getpid(), flush=True)
    sys.stdin.readline()
step = make_step()
torch.cuda.synchronize()
print('ready', os.getpid(), flush=True)
start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
for i, line in enumerate(sys.stdin):
    words = line.split()
    if not words or words[0] != 'burst':
        break
    n = int(words[1])
    torch.cuda.synchronize()
    start.record()
    losses = [step() for _ in range(n)]
    stop.record()
    torch.cuda.synchronize()
    print(f'burst {i} ms {start.elapsed_time(stop) / n:.4f} losses '
          + ','.join(l.item().hex() for l in losses), flush=True)
