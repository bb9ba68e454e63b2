// The seams between codegen's folders hold: the layout pass and the lowering core know no back
// end, and neither back end includes the other (docs/ARCHITECTURE.md, "Lowering").
#include <gtest/gtest.h>

#include "tests/support/folder_includes.h"

namespace {

using gpubt::testing::includes_of;
using Found = std::vector<std::string>;

TEST(CodegenFolders, BackEndsIncludeNotEachOther) {
  EXPECT_EQ(includes_of("codegen/bpf", {"codegen/device/"}), Found{});
  EXPECT_EQ(includes_of("codegen/device", {"codegen/bpf/"}), Found{});
}

TEST(CodegenFolders, LayoutAndCoreKnowNoBackEnd) {
  for (const char *folder : {"codegen/layout", "codegen/common"})
    EXPECT_EQ(includes_of(folder, {"codegen/bpf/", "codegen/device/", "targets/", "driver/"}),
              Found{})
        << folder;
  EXPECT_EQ(includes_of("codegen/layout", {"codegen/common/", "llvm/"}), Found{});
}

} // namespace
