// Enum tables generated from the CUDA and HIP headers: value -> name, name -> value.
#include "stdlib/enums.h"

#include <gtest/gtest.h>

using namespace gpubt::stdlib;

static std::string name_of(std::string_view e, int64_t v) {
  auto n = enum_value_name(e, v);
  return n ? std::string(*n) : "<none>";
}

TEST(Enums, CudaErrors) {
  EXPECT_EQ(name_of("cudaError_t", 0), "cudaSuccess");
  EXPECT_EQ(name_of("cudaError_t", 35), "cudaErrorInsufficientDriver");
  EXPECT_EQ(name_of("cudaError_t", 100), "cudaErrorNoDevice");
  EXPECT_EQ(name_of("cudaError_t", 2), "cudaErrorMemoryAllocation");
  EXPECT_EQ(name_of("cudaError_t", 999), "cudaErrorUnknown");
  EXPECT_EQ(name_of("cudaError_t", 123456), "<none>");
}

TEST(Enums, DriverResults) {
  EXPECT_EQ(name_of("CUresult", 0), "CUDA_SUCCESS");
  EXPECT_EQ(name_of("CUresult", 100), "CUDA_ERROR_NO_DEVICE");
  EXPECT_EQ(name_of("CUresult", 34), "CUDA_ERROR_STUB_LIBRARY"); // what libcuda's stub returns
  EXPECT_EQ(name_of("CUresult", 35), "<none>");                  // no driver-API twin of 35
  EXPECT_EQ(name_of("CUresult", 3), "CUDA_ERROR_NOT_INITIALIZED");
  EXPECT_EQ(name_of("CUresult", 999), "CUDA_ERROR_UNKNOWN");
}

TEST(Enums, HipErrorsPreferTheCurrentNameOverTheDeprecatedAlias) {
  EXPECT_EQ(name_of("hipError_t", 100), "hipErrorNoDevice");
  EXPECT_EQ(name_of("hipError_t", 35), "hipErrorInsufficientDriver");
  EXPECT_EQ(name_of("hipError_t", 2), "hipErrorOutOfMemory");
  EXPECT_EQ(name_of("hipError_t", 400), "hipErrorInvalidHandle");
  EXPECT_EQ(name_of("hipError_t", 1054), "hipErrorTbd"); // implicit: previous + 1
  auto alias = find_enum_constant("hipErrorMemoryAllocation");
  ASSERT_TRUE(alias);
  EXPECT_EQ(alias->value, 2);
}

TEST(Enums, MemcpyKinds) {
  EXPECT_EQ(name_of("cudaMemcpyKind", 0), "cudaMemcpyHostToHost");
  EXPECT_EQ(name_of("cudaMemcpyKind", 1), "cudaMemcpyHostToDevice");
  EXPECT_EQ(name_of("cudaMemcpyKind", 2), "cudaMemcpyDeviceToHost");
  EXPECT_EQ(name_of("cudaMemcpyKind", 3), "cudaMemcpyDeviceToDevice");
  EXPECT_EQ(name_of("cudaMemcpyKind", 4), "cudaMemcpyDefault");
  EXPECT_EQ(name_of("hipMemcpyKind", 2), "hipMemcpyDeviceToHost");
}

// nccl.h declares its enums as typedefs of anonymous enums, aliases after the name they alias,
// and counts (ncclNumTypes, ncclMaxRedOp: an expression of sizeof) among the values.
TEST(Enums, NcclEnumsByTheirFirstNameWithoutTheCounts) {
  EXPECT_EQ(name_of("ncclResult_t", 0), "ncclSuccess");
  EXPECT_EQ(name_of("ncclResult_t", 4), "ncclInvalidArgument");
  EXPECT_EQ(name_of("ncclResult_t", 7), "ncclInProgress");
  EXPECT_EQ(name_of("ncclResult_t", 8), "<none>"); // ncclNumResults
  EXPECT_EQ(name_of("ncclDataType_t", 0), "ncclInt8"); // not ncclChar
  EXPECT_EQ(name_of("ncclDataType_t", 7), "ncclFloat32"); // not ncclFloat
  EXPECT_EQ(name_of("ncclDataType_t", 9), "ncclBfloat16");
  EXPECT_EQ(name_of("ncclDataType_t", 12), "<none>"); // ncclNumTypes
  EXPECT_EQ(name_of("ncclRedOp_t", 4), "ncclAvg");
  EXPECT_EQ(name_of("ncclRedOp_t", 5), "<none>"); // ncclNumOps, or a PreMulSum op made at run time
  auto c = find_enum_constant("ncclFloat");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->value, 7);
  EXPECT_FALSE(find_enum_constant("ncclMaxRedOp"));
}

TEST(Enums, TablesAndNames) {
  auto names = enum_names();
  std::vector<std::string_view> expected = {
      "CUresult",     "cudaError_t",    "cudaMemcpyKind", "hipError_t",
      "hipMemcpyKind", "ncclDataType_t", "ncclRedOp_t",    "ncclResult_t"};
  EXPECT_EQ(names, expected);
  const EnumTable *t = find_enum("cudaMemcpyKind");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->size(), 5u);
  EXPECT_EQ(find_enum("nope"), nullptr);
  EXPECT_EQ(name_of("nope", 0), "<none>");
  const EnumDef *def = find_enum_def("CUresult");
  ASSERT_TRUE(def);
  EXPECT_EQ(def->c_tag, "cudaError_enum");
  EXPECT_EQ(def->size, 4u);
  EXPECT_FALSE(def->is_signed);
}

TEST(Enums, ConstantsByName) {
  auto c = find_enum_constant("cudaMemcpyDeviceToHost");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->def->name, "cudaMemcpyKind");
  EXPECT_EQ(c->value, 2);
  c = find_enum_constant("CUDA_ERROR_NO_DEVICE");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->def->name, "CUresult");
  EXPECT_EQ(c->value, 100);
  EXPECT_FALSE(find_enum_constant("cudaNoSuchThing"));
}
