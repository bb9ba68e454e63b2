"""A few PyTorch training steps (MLP, AdamW, cross-entropy) on the GPU, for tracing the CUDA
calls and kernels of a real framework. usage: torch_train_step.py [steps]"""
import sys
import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(),
                            torch.nn.Linear(4096, 1024), torch.nn.GELU(),
                            torch.nn.Linear(1024, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(steps):
    x = torch.randn(256, 1024, device='cuda')
    y = torch.randint(0, 10, (256,), device='cuda')
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)  # the allocator keeps memory cached between steps
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print(f'loss {loss.item():.4f}')
