// CUDA driver API calls for the `cuda` library probes: cuMemAlloc 1024 B x2 and 4096 B x1,
// cuMemAllocManaged 4096 B x1, cuMemcpyHtoD x2, cuMemcpyDtoH x1, the async copies once each,
// cuModuleLoadData + cuModuleGetFunction("_Z5scalePfi") then cuLaunchKernel x3, cuLibraryLoadData
// + cuLibraryGetKernel then cuLaunchKernel x1 through the CUkernel, stream and context syncs,
// cuMemFree of each allocation. Every call is made even when the previous ones failed.
// Optional argv[1]: seconds to sleep first (lets a tracer attach with -p).
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include <cuda.h>

// nvcc -ptx -arch=compute_75 of `__global__ void scale(float *data, int n)`: JIT-compiled on any
// GPU from Turing on.
static const char scale_ptx[] = R"(.version 9.0
.target sm_75
.address_size 64
.visible .entry _Z5scalePfi(
	.param .u64 _Z5scalePfi_param_0,
	.param .u32 _Z5scalePfi_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<3>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<5>;
	ld.param.u64 	%rd1, [_Z5scalePfi_param_0];
	ld.param.u32 	%r2, [_Z5scalePfi_param_1];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.s32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.f32 	%f1, [%rd4];
	add.f32 	%f2, %f1, %f1;
	st.global.f32 	[%rd4], %f2;
$L__BB0_2:
	ret;
}
)";

static void report(const char *what, CUresult res) {
  const char *name = nullptr;
  if (cuGetErrorName(res, &name) != CUDA_SUCCESS)
    name = "?";
  fprintf(stderr, "%s: %d %s\n", what, (int)res, name);
}

int main(int argc, char **argv) {
  if (argc > 1)
    sleep(atoi(argv[1]));
  report("cuInit", cuInit(0));
  CUdevice dev = 0;
  report("cuDeviceGet", cuDeviceGet(&dev, 0));
  CUcontext ctx = nullptr;
  report("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, dev));
  report("cuCtxSetCurrent", cuCtxSetCurrent(ctx));

  const size_t sizes[] = {1024, 1024, 4096};
  CUdeviceptr bufs[4] = {};
  for (int i = 0; i < 3; ++i)
    report("cuMemAlloc", cuMemAlloc(&bufs[i], sizes[i]));
  report("cuMemAllocManaged", cuMemAllocManaged(&bufs[3], 4096, CU_MEM_ATTACH_GLOBAL));

  static float host[1024];
  report("cuMemcpyHtoD", cuMemcpyHtoD(bufs[0], host, 1024));
  report("cuMemcpyHtoD", cuMemcpyHtoD(bufs[2], host, 4096));
  report("cuMemcpyDtoH", cuMemcpyDtoH(host, bufs[2], 4096));

  CUstream stream = nullptr;
  report("cuStreamCreate", cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  report("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync(bufs[1], host, 1024, stream));
  report("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync(host, bufs[1], 1024, stream));

  CUmodule mod = nullptr;
  report("cuModuleLoadData", cuModuleLoadData(&mod, scale_ptx));
  CUfunction fn = nullptr;
  report("cuModuleGetFunction", cuModuleGetFunction(&fn, mod, "_Z5scalePfi"));
  int n = 1024;
  void *params[] = {&bufs[2], &n};
  for (int i = 0; i < 3; ++i)
    report("cuLaunchKernel", cuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, stream, params, nullptr));

  CUlibrary lib = nullptr;
  report("cuLibraryLoadData",
         cuLibraryLoadData(&lib, scale_ptx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel kernel = nullptr;
  report("cuLibraryGetKernel", cuLibraryGetKernel(&kernel, lib, "_Z5scalePfi"));
  report("cuLaunchKernel", cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), 4, 1, 1, 256, 1,
                                          1, 0, stream, params, nullptr));

  report("cuStreamSynchronize", cuStreamSynchronize(stream));
  report("cuCtxSynchronize", cuCtxSynchronize());
  report("cuStreamDestroy", cuStreamDestroy(stream));
  for (CUdeviceptr p : bufs)
    report("cuMemFree", cuMemFree(p));
  return 0;
}
