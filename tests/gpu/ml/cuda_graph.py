"""PyTorch CUDA graphs: an MLP's forward captured once (stream capture), replayed 10 times.
Prints a checksum of the output and how many kernel nodes the graph has (from the CUDA runtime,
cudaGraphGetNodes/cudaGraphNodeGetType), so a tracer's launch count can be checked: every replay
launches each kernel node once."""
import ctypes, glob, hashlib, os
import torch

REPLAYS = 10
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.GELU(),
                            torch.nn.Linear(2048, 1024)).cuda().eval()
x = torch.randn(64, 1024, device='cuda')
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side), torch.no_grad():
    for _ in range(3):  # warm-up outside the capture (cuBLAS handles, workspaces)
        model(x)
torch.cuda.current_stream().wait_stream(side)
g = torch.cuda.CUDAGraph(keep_graph=True)
with torch.cuda.graph(g), torch.no_grad():
    y = model(x)
g.instantiate()


def kernel_nodes(graph_handle):
    lib = glob.glob(os.path.join(os.path.dirname(torch.__file__), '..', 'nvidia', '*', 'lib',
                                 'libcudart.so*'))
    rt = ctypes.CDLL(lib[0] if lib else 'libcudart.so')
    n = ctypes.c_size_t(0)
    assert rt.cudaGraphGetNodes(ctypes.c_void_p(graph_handle), None, ctypes.byref(n)) == 0
    nodes = (ctypes.c_void_p * n.value)()
    assert rt.cudaGraphGetNodes(ctypes.c_void_p(graph_handle), nodes, ctypes.byref(n)) == 0
    kinds = [ctypes.c_int() for _ in range(n.value)]
    for node, kind in zip(nodes, kinds):
        assert rt.cudaGraphNodeGetType(ctypes.c_void_p(node), ctypes.byref(kind)) == 0
    return sum(k.value == 0 for k in kinds)  # cudaGraphNodeTypeKernel


kernels = kernel_nodes(g.raw_cuda_graph())
for _ in range(REPLAYS):
    g.replay()
torch.cuda.synchronize()
print('checksum', hashlib.sha256(y.cpu().numpy().tobytes()).hexdigest()[:16])
print(f'graph_kernels {kernels} replays {REPLAYS}')
