// The catalog as the semantic passes see it: which attach points are catalogued, the types of
// args.NAME and retval, the unknown-argument message.
#include "stdlib/api_types.h"

#include <gtest/gtest.h>

using namespace gpubt;
using frontend::AttachPoint;
using frontend::Provider;
using frontend::TypeKind;

namespace {

AttachPoint uprobe(std::string target, std::string func, Provider p = Provider::Uprobe) {
  AttachPoint ap;
  ap.provider = p;
  ap.target = std::move(target);
  ap.func = std::move(func);
  return ap;
}

TEST(ApiTypes, AliasPathAndSymbolFindTheFunction) {
  EXPECT_EQ(stdlib::api_function_for(uprobe("cudart", "cudaMalloc"))->name, "cudaMalloc");
  EXPECT_EQ(stdlib::api_function_for(uprobe("./prog", "cudaMalloc"))->name, "cudaMalloc");
  EXPECT_EQ(stdlib::api_function_for(uprobe("cuda", "cuMemAlloc_v2"))->name, "cuMemAlloc");
  EXPECT_EQ(stdlib::api_function_for(uprobe("cudart", "cuMemAlloc")), nullptr);
  EXPECT_EQ(stdlib::api_function_for(uprobe("cudart", "main")), nullptr);
  AttachPoint tp = uprobe("sched", "cudaMalloc", Provider::Tracepoint);
  EXPECT_EQ(stdlib::api_function_for(tp), nullptr);
}

TEST(ApiTypes, ArgumentTypes) {
  auto size = stdlib::api_arg_type(uprobe("cudart", "cudaMalloc"), "size");
  ASSERT_TRUE(size);
  EXPECT_EQ(size->kind, TypeKind::Integer);
  EXPECT_EQ(size->size, 8u);
  EXPECT_FALSE(size->is_signed);

  auto kind = stdlib::api_arg_type(uprobe("cudart", "cudaMemcpy", Provider::Uretprobe), "kind");
  ASSERT_TRUE(kind);
  EXPECT_EQ(kind->kind, TypeKind::Enum);
  EXPECT_EQ(kind->enum_name, "cudaMemcpyKind");
  EXPECT_EQ(kind->size, 4u);

  auto grid = stdlib::api_arg_type(uprobe("cudart", "cudaLaunchKernel"), "gridDim");
  ASSERT_TRUE(grid);
  EXPECT_EQ(grid->kind, TypeKind::Tuple);
  EXPECT_EQ(grid->size, 12u);
  ASSERT_EQ(grid->elems.size(), 3u);
  EXPECT_EQ(grid->elems[2].size, 4u);

  auto value = stdlib::api_arg_type(uprobe("cudart", "cudaMemset"), "value");
  ASSERT_TRUE(value);
  EXPECT_EQ(value->size, 4u);
  EXPECT_TRUE(value->is_signed);

  EXPECT_FALSE(stdlib::api_arg_type(uprobe("cudart", "cudaMalloc"), "bytes"));
}

TEST(ApiTypes, RetvalIsTheReturnEnum) {
  auto r = stdlib::api_retval_type(uprobe("cuda", "cuMemAlloc", Provider::Uretprobe));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, TypeKind::Enum);
  EXPECT_EQ(r->enum_name, "CUresult");
  EXPECT_EQ(stdlib::api_retval_type(uprobe("hip", "hipMalloc"))->enum_name, "hipError_t");
  EXPECT_FALSE(stdlib::api_retval_type(uprobe("./prog", "main")));
}

TEST(ApiTypes, UnknownArgumentListsTheValidOnes) {
  EXPECT_EQ(stdlib::api_arg_error(uprobe("cudart", "cudaMalloc"), "bytes"),
            "cudaMalloc has no argument 'bytes'; its arguments are: devPtr, size");
  EXPECT_EQ(stdlib::api_arg_error(uprobe("cudart", "cudaMalloc"), "size"), "");
  EXPECT_EQ(stdlib::api_arg_error(uprobe("./prog", "main"), "x"), "");
}

// NCCL through its alias and RCCL's: typed enums, and the 128-byte ncclUniqueId passed by value
// (on the stack, which pushes no register: rank is still rdx) refused with what to use instead.
TEST(ApiTypes, NcclArgumentsAndTheUniqueIdByValue) {
  auto dt = stdlib::api_arg_type(uprobe("nccl", "ncclAllReduce"), "datatype");
  ASSERT_TRUE(dt);
  EXPECT_EQ(dt->enum_name, "ncclDataType_t");
  EXPECT_EQ(stdlib::api_arg_type(uprobe("rccl", "ncclAllReduce"), "op")->enum_name, "ncclRedOp_t");
  EXPECT_EQ(stdlib::api_retval_type(uprobe("nccl", "ncclGroupEnd"))->enum_name, "ncclResult_t");
  EXPECT_EQ(stdlib::api_function_for(uprobe("cuda", "ncclAllReduce")), nullptr);
  auto rank = stdlib::api_arg_type(uprobe("nccl", "ncclCommInitRank"), "rank");
  ASSERT_TRUE(rank);
  EXPECT_TRUE(rank->is_signed);
  const auto *fn = stdlib::api_function_for(uprobe("nccl", "ncclCommInitRank"));
  ASSERT_TRUE(fn);
  EXPECT_FALSE(stdlib::find_api_param(*fn, "rank")->loc.on_stack);
  EXPECT_EQ(stdlib::find_api_param(*fn, "rank")->loc.index, 2); // rdx
  EXPECT_EQ(stdlib::find_api_param(*fn, "commId")->loc.count, 16);
  EXPECT_FALSE(stdlib::api_arg_type(uprobe("nccl", "ncclCommInitRank"), "commId"));
  EXPECT_EQ(stdlib::api_arg_error(uprobe("nccl", "ncclCommInitRank"), "commId"),
            "ncclCommInitRank's commId is a ncclUniqueId of 128 bytes passed by value, which a "
            "script cannot read: nccl_comm_id(comm) is its hash");
}

} // namespace
