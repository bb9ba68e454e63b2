"""A PyTorch job with known elementwise kernels (issue 28's ncu check): fills, a multiply-add and
a ReLU over 2^20 floats, each one vectorized_elementwise_kernel launch, then a checksum of the
result as exact hex (the "loss": a traced run must print the same)."""
import torch

n = 1 << 20
x = torch.full((n,), 1.5, device='cuda')
y = torch.full((n,), -0.25, device='cuda')
z = torch.relu(x * y + 1.0)
torch.cuda.synchronize()
print('checksum', float(z.double().sum().item()).hex())
