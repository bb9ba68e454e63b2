// The API catalog: every function of issue 3 with its documented parameter names, value kinds,
// SysV argument locations and exported symbols.
#include "stdlib/api_catalog.h"

#include <cstddef>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <sys/user.h>

#include <gtest/gtest.h>

using namespace gpubt::stdlib;

namespace {

const ApiFunction &fn(std::string_view name) {
  const ApiFunction *f = find_api_function(name);
  if (!f)
    throw std::runtime_error("not catalogued: " + std::string(name));
  return *f;
}

std::string names(std::string_view name) { return join_api_param_names(fn(name)); }

// "rdi", "rsi+rdx", "stack0" for each parameter, joined with spaces.
std::string locations(std::string_view name) {
  static const char *regs[] = {"rdi", "rsi", "rdx", "rcx", "r8", "r9"};
  std::string out;
  for (const ApiParam &p : fn(name).params) {
    if (!out.empty())
      out += " ";
    for (unsigned i = 0; i < p.loc.count; ++i) {
      if (i)
        out += "+";
      out += p.loc.on_stack ? "stack" + std::to_string(p.loc.index + i) : regs[p.loc.index + i];
    }
  }
  return out;
}

} // namespace

TEST(ApiCatalog, EveryFunctionOfIssue3IsPresentWithItsDocumentedParameterNames) {
  const std::pair<const char *, const char *> expected[] = {
      {"cudaMalloc", "devPtr, size"},
      {"cudaFree", "devPtr"},
      {"cudaMallocManaged", "devPtr, size, flags"},
      {"cudaMallocAsync", "devPtr, size, hStream"},
      {"cudaFreeAsync", "devPtr, hStream"},
      {"cudaMemcpy", "dst, src, count, kind"},
      {"cudaMemcpyAsync", "dst, src, count, kind, stream"},
      {"cudaMemset", "devPtr, value, count"},
      {"cudaLaunchKernel", "func, gridDim, blockDim, args, sharedMem, stream"},
      {"cudaLaunchKernelExC", "config, func, args"},
      {"cudaStreamCreate", "pStream"},
      {"cudaStreamDestroy", "stream"},
      {"cudaStreamSynchronize", "stream"},
      {"cudaDeviceSynchronize", ""},
      {"cudaEventCreate", "event"},
      {"cudaEventRecord", "event, stream"},
      {"cudaEventSynchronize", "event"},
      {"cudaGetDevice", "device"},
      {"cudaSetDevice", "device"},
      {"cudaGraphLaunch", "graphExec, stream"},
      // cudart internals of CUDA 13 <<<>>> launches (kernel names need the handle -> stub map)
      {"__cudaGetKernel", "kernel, func"},
      {"__cudaLaunchKernel", "kernel, gridDim, blockDim, args, sharedMem, stream"},
      {"cuMemAlloc", "dptr, bytesize"},
      {"cuMemFree", "dptr"},
      {"cuMemAllocManaged", "dptr, bytesize, flags"},
      {"cuMemcpyHtoD", "dstDevice, srcHost, ByteCount"},
      {"cuMemcpyDtoH", "dstHost, srcDevice, ByteCount"},
      {"cuMemcpyHtoDAsync", "dstDevice, srcHost, ByteCount, hStream"},
      {"cuMemcpyDtoHAsync", "dstHost, srcDevice, ByteCount, hStream"},
      {"cuLaunchKernel", "f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, "
                         "sharedMemBytes, hStream, kernelParams, extra"},
      {"cuLaunchKernelEx", "config, f, kernelParams, extra"},
      {"cuLaunchCooperativeKernel", "f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, "
                                    "blockDimZ, sharedMemBytes, hStream, kernelParams"},
      {"cuStreamCreate", "phStream, Flags"},
      {"cuStreamDestroy", "hStream"},
      {"cuStreamSynchronize", "hStream"},
      {"cuCtxSynchronize", ""},
      {"cuModuleLoadData", "module, image"},
      {"cuLibraryLoadData", "library, code, jitOptions, jitOptionsValues, numJitOptions, "
                            "libraryOptions, libraryOptionValues, numLibraryOptions"},
      {"cuModuleGetFunction", "hfunc, hmod, name"},
      {"cuLibraryGetKernel", "pKernel, library, name"},
      {"hipMalloc", "ptr, size"},
      {"hipFree", "ptr"},
      {"hipMemcpy", "dst, src, sizeBytes, kind"},
      {"hipMemcpyAsync", "dst, src, sizeBytes, kind, stream"},
      {"hipLaunchKernel", "function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream"},
      {"hipModuleLaunchKernel", "f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, "
                                "blockDimZ, sharedMemBytes, stream, kernelParams, extra"},
      {"hipDeviceSynchronize", ""},
      {"hipStreamCreate", "stream"},
      {"hipStreamSynchronize", "stream"},
      {"ncclGetVersion", "version"},
      {"ncclGetUniqueId", "uniqueId"},
      {"ncclCommInitRank", "comm, nranks, commId, rank"},
      {"ncclCommInitRankConfig", "comm, nranks, commId, rank, config"},
      {"ncclCommInitAll", "comm, ndev, devlist"},
      {"ncclCommSplit", "comm, color, key, newcomm, config"},
      {"ncclCommFinalize", "comm"},
      {"ncclCommDestroy", "comm"},
      {"ncclCommAbort", "comm"},
      {"ncclCommCount", "comm, count"},
      {"ncclCommUserRank", "comm, rank"},
      {"ncclCommCuDevice", "comm, device"},
      {"ncclCommGetAsyncError", "comm, asyncError"},
      {"ncclAllReduce", "sendbuff, recvbuff, count, datatype, op, comm, stream"},
      {"ncclReduce", "sendbuff, recvbuff, count, datatype, op, root, comm, stream"},
      {"ncclBcast", "buff, count, datatype, root, comm, stream"},
      {"ncclBroadcast", "sendbuff, recvbuff, count, datatype, root, comm, stream"},
      {"ncclReduceScatter", "sendbuff, recvbuff, recvcount, datatype, op, comm, stream"},
      {"ncclAllGather", "sendbuff, recvbuff, sendcount, datatype, comm, stream"},
      {"ncclAlltoAll", "sendbuff, recvbuff, count, datatype, comm, stream"},
      {"ncclGather", "sendbuff, recvbuff, count, datatype, root, comm, stream"},
      {"ncclScatter", "sendbuff, recvbuff, count, datatype, root, comm, stream"},
      {"ncclSend", "sendbuff, count, datatype, peer, comm, stream"},
      {"ncclRecv", "recvbuff, count, datatype, peer, comm, stream"},
      {"ncclGroupStart", ""},
      {"ncclGroupEnd", ""},
  };
  for (auto [name, params] : expected)
    EXPECT_EQ(names(name), params) << name;
  EXPECT_EQ(api_functions().size(), std::size(expected));
}

TEST(ApiCatalog, LibrariesAndReturnEnums) {
  EXPECT_EQ(fn("cudaMalloc").library, ApiLibrary::Cudart);
  EXPECT_EQ(fn("cudaMalloc").return_enum, "cudaError_t");
  EXPECT_EQ(fn("cuMemAlloc").library, ApiLibrary::Cuda);
  EXPECT_EQ(fn("cuMemAlloc").return_enum, "CUresult");
  EXPECT_EQ(fn("hipMalloc").library, ApiLibrary::Hip);
  EXPECT_EQ(fn("hipMalloc").return_enum, "hipError_t");
  EXPECT_EQ(library_alias(ApiLibrary::Cudart), "cudart");
  EXPECT_EQ(library_alias(ApiLibrary::Cuda), "cuda");
  EXPECT_EQ(library_alias(ApiLibrary::Hip), "hip");
  EXPECT_EQ(fn("ncclAllReduce").library, ApiLibrary::Nccl);
  EXPECT_EQ(fn("ncclAllReduce").return_enum, "ncclResult_t");
  EXPECT_EQ(library_alias(ApiLibrary::Nccl), "nccl");
  EXPECT_TRUE(is_library_alias(ApiLibrary::Nccl, "rccl")); // RCCL declares NCCL's API
  EXPECT_FALSE(is_library_alias(ApiLibrary::Cuda, "rccl"));
  EXPECT_EQ(find_api_function(ApiLibrary::Cuda, "cudaMalloc"), nullptr);
  EXPECT_EQ(find_api_function(ApiLibrary::Cudart, "cudaMalloc"), &fn("cudaMalloc"));
  EXPECT_EQ(find_api_function("malloc"), nullptr);
}

TEST(ApiCatalog, ValueKindsAndTypesAsDeclared) {
  const ApiParam *size = find_api_param(fn("cudaMalloc"), "size");
  ASSERT_TRUE(size);
  EXPECT_EQ(size->c_type, "size_t");
  EXPECT_EQ(size->kind, ApiValueKind::Integer);
  EXPECT_EQ(size->size, 8u);
  EXPECT_FALSE(size->is_signed);

  const ApiParam *dev_ptr = find_api_param(fn("cudaMalloc"), "devPtr");
  EXPECT_EQ(dev_ptr->c_type, "void **");
  EXPECT_EQ(dev_ptr->kind, ApiValueKind::Pointer);

  const ApiParam *kind = find_api_param(fn("cudaMemcpy"), "kind");
  EXPECT_EQ(kind->c_type, "enum cudaMemcpyKind");
  EXPECT_EQ(kind->kind, ApiValueKind::Enum);
  EXPECT_EQ(kind->enum_name, "cudaMemcpyKind");
  EXPECT_EQ(kind->size, 4u);
  EXPECT_EQ(find_api_param(fn("hipMemcpy"), "kind")->enum_name, "hipMemcpyKind");

  const ApiParam *value = find_api_param(fn("cudaMemset"), "value");
  EXPECT_EQ(value->kind, ApiValueKind::Integer);
  EXPECT_EQ(value->size, 4u);
  EXPECT_TRUE(value->is_signed);

  EXPECT_EQ(find_api_param(fn("cudaStreamSynchronize"), "stream")->kind, ApiValueKind::Handle);
  EXPECT_EQ(find_api_param(fn("cuLaunchKernel"), "f")->kind, ApiValueKind::Handle);
  EXPECT_EQ(find_api_param(fn("cuMemFree"), "dptr")->c_type, "CUdeviceptr");
  EXPECT_EQ(find_api_param(fn("cuMemFree"), "dptr")->kind, ApiValueKind::Pointer);
  EXPECT_EQ(find_api_param(fn("cuModuleGetFunction"), "name")->kind, ApiValueKind::String);
  EXPECT_EQ(find_api_param(fn("cuLaunchKernel"), "gridDimX")->size, 4u);

  const ApiParam *grid = find_api_param(fn("cudaLaunchKernel"), "gridDim");
  EXPECT_EQ(grid->kind, ApiValueKind::Dim3);
  EXPECT_EQ(grid->size, 12u);
  EXPECT_EQ(find_api_param(fn("cudaLaunchKernel"), "func")->c_type, "const void *");
  EXPECT_EQ(find_api_param(fn("cudaMalloc"), "bogus"), nullptr);
}

TEST(ApiCatalog, SysVLocations) {
  EXPECT_EQ(locations("cudaMalloc"), "rdi rsi");
  EXPECT_EQ(locations("cudaMemcpy"), "rdi rsi rdx rcx");
  // dim3 by value is 12 bytes: two INTEGER eightbytes, so two registers each.
  EXPECT_EQ(locations("cudaLaunchKernel"), "rdi rsi+rdx rcx+r8 r9 stack0 stack1");
  EXPECT_EQ(locations("hipLaunchKernel"), "rdi rsi+rdx rcx+r8 r9 stack0 stack1");
  EXPECT_EQ(locations("__cudaLaunchKernel"), "rdi rsi+rdx rcx+r8 r9 stack0 stack1");
  EXPECT_EQ(locations("cuLaunchKernel"),
            "rdi rsi rdx rcx r8 r9 stack0 stack1 stack2 stack3 stack4");
  EXPECT_EQ(locations("cuLibraryLoadData"), "rdi rsi rdx rcx r8 r9 stack0 stack1");
  EXPECT_EQ(locations("cudaDeviceSynchronize"), "");
}

TEST(ApiCatalog, ExportedSymbols) {
  auto syms = [](std::string_view name) {
    std::string out;
    for (std::string_view s : fn(name).symbols)
      out += (out.empty() ? "" : " ") + std::string(s);
    return out;
  };
  EXPECT_EQ(syms("cudaMalloc"), "cudaMalloc");
  EXPECT_EQ(syms("cudaMemcpy"), "cudaMemcpy cudaMemcpy_ptds");
  EXPECT_EQ(syms("cudaLaunchKernel"), "cudaLaunchKernel cudaLaunchKernel_ptsz");
  EXPECT_EQ(syms("__cudaLaunchKernel"), "__cudaLaunchKernel __cudaLaunchKernel_ptsz");
  EXPECT_EQ(syms("__cudaGetKernel"), "__cudaGetKernel");
  EXPECT_EQ(syms("cuMemAlloc"), "cuMemAlloc_v2");
  EXPECT_EQ(syms("cuMemFree"), "cuMemFree_v2");
  EXPECT_EQ(syms("cuMemcpyHtoD"), "cuMemcpyHtoD_v2 cuMemcpyHtoD_v2_ptds");
  EXPECT_EQ(syms("cuMemcpyDtoHAsync"), "cuMemcpyDtoHAsync_v2 cuMemcpyDtoHAsync_v2_ptsz");
  EXPECT_EQ(syms("cuStreamDestroy"), "cuStreamDestroy_v2");
  EXPECT_EQ(syms("cuCtxSynchronize"), "cuCtxSynchronize");
  EXPECT_EQ(syms("cuLaunchKernel"), "cuLaunchKernel cuLaunchKernel_ptsz");
  EXPECT_EQ(syms("hipMemcpy"), "hipMemcpy hipMemcpy_spt");
  EXPECT_EQ(find_api_function_by_symbol("cuMemAlloc_v2"), &fn("cuMemAlloc"));
  EXPECT_EQ(find_api_function_by_symbol("cudaMemcpy_ptds"), &fn("cudaMemcpy"));
  EXPECT_EQ(find_api_function_by_symbol("cuMemAlloc"), nullptr); // the legacy 32-bit ABI
}

TEST(ApiCatalog, ParamNamesForDiagnostics) {
  auto v = api_param_names(fn("cudaMemcpy"));
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0], "dst");
  EXPECT_EQ(v[3], "kind");
  EXPECT_TRUE(api_param_names(fn("cudaDeviceSynchronize")).empty());
}

TEST(ApiCatalog, PtRegsOffsetsMatchTheKernelLayout) {
  // struct user_regs_struct shares struct pt_regs' layout up to ss on x86-64.
  EXPECT_EQ(pt_regs_arg_offset(0), offsetof(user_regs_struct, rdi));
  EXPECT_EQ(pt_regs_arg_offset(1), offsetof(user_regs_struct, rsi));
  EXPECT_EQ(pt_regs_arg_offset(2), offsetof(user_regs_struct, rdx));
  EXPECT_EQ(pt_regs_arg_offset(3), offsetof(user_regs_struct, rcx));
  EXPECT_EQ(pt_regs_arg_offset(4), offsetof(user_regs_struct, r8));
  EXPECT_EQ(pt_regs_arg_offset(5), offsetof(user_regs_struct, r9));
  EXPECT_EQ(pt_regs_sp_offset, offsetof(user_regs_struct, rsp));
  EXPECT_EQ(pt_regs_ax_offset, offsetof(user_regs_struct, rax));
  EXPECT_EQ(sysv_arg_reg_name(0), "di");
  EXPECT_EQ(sysv_arg_reg_name(5), "r9");
  EXPECT_EQ(pt_regs_arg_offset(6), UINT32_MAX);
}

// The committed tables are what the generators produce from the installed headers.
static std::string run(const std::string &cmd) {
  std::unique_ptr<FILE, int (*)(FILE *)> p(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  char buf[4096];
  size_t n;
  while (p && (n = fread(buf, 1, sizeof buf, p.get())) > 0)
    out.append(buf, n);
  return out;
}

static std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ApiCatalog, GeneratedFilesAreUpToDate) {
  if (!std::ifstream("/usr/local/cuda/include/cuda.h") ||
      !std::ifstream("/usr/include/hip/hip_runtime_api.h"))
    GTEST_SKIP() << "CUDA or HIP headers not installed";
  for (auto [script, file] : {std::pair{"gen-api-catalog.py", "api_catalog_data.cpp"},
                              std::pair{"gen-api-enums.py", "enums_data.cpp"}}) {
    std::string generated = run(std::string("python3 ") + GPUBT_SOURCE_DIR + "/scripts/" + script);
    EXPECT_EQ(generated, slurp(std::string(GPUBT_SOURCE_DIR) + "/stdlib/" + file))
        << script << " output differs from stdlib/" << file << ": re-run it";
  }
}

// Every symbol the catalog probes is exported by the real library (the toolkit's libcudart.so.13
// and driver stub, Debian's libamdhip64) and present in a static-cudart nvcc binary's .symtab.
TEST(ApiCatalog, SymbolsExistInTheRealLibraries) {
  auto symbols_of = [](const std::string &nm_cmd) {
    std::string out = run(nm_cmd + " 2>/dev/null");
    std::set<std::string> syms;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      std::string sym = line.substr(line.find_last_of(' ') + 1);
      syms.insert(sym.substr(0, sym.find('@')));
    }
    return syms;
  };
  const std::pair<ApiLibrary, std::string> libs[] = {
      {ApiLibrary::Cudart, "/usr/local/cuda/lib64/libcudart.so.13"},
      {ApiLibrary::Cuda, "/usr/local/cuda/lib64/stubs/libcuda.so"},
      {ApiLibrary::Hip, "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"},
      {ApiLibrary::Nccl, "/usr/local/cuda/lib64/libnccl.so.2"},
      {ApiLibrary::Cudart, std::string(GPUBT_BINARY_DIR) + "/tests/programs/cuda_calls_static"},
  };
  int checked = 0;
  for (auto &[lib, path] : libs) {
    if (!std::ifstream(path))
      continue;
    bool is_static = path.find("cuda_calls_static") != std::string::npos;
    auto syms = symbols_of((is_static ? "nm " : "nm -D --defined-only ") + path);
    for (const ApiFunction &f : api_functions())
      if (f.library == lib)
        for (std::string_view s : f.symbols)
          EXPECT_TRUE(syms.count(std::string(s))) << s << " not in " << path;
    ++checked;
  }
  if (!checked)
    GTEST_SKIP() << "no CUDA or HIP library installed";
}
