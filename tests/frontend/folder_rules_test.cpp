// The front end's libraries build in one direction (CMakeLists.txt): the syntax tree (frontend/,
// gpubt_ast) knows no other part; stdlib's tables and the parser know the tree, not the passes;
// only frontend/parse sees ANTLR. A broken arrow here is a static-library cycle at link time.
#include <gtest/gtest.h>

#include "tests/support/folder_includes.h"

namespace {

using gpubt::testing::includes_of;
using Found = std::vector<std::string>;

TEST(FrontendFolders, TheSyntaxTreeKnowsNoOtherPart) {
  EXPECT_EQ(includes_of("frontend", {"frontend/parse/", "frontend/passes/", "frontend/clang/",
                                     "stdlib/", "codegen/", "runtime/", "llvm/", "Gpubt",
                                     "antlr4"}),
            Found{});
}

TEST(FrontendFolders, TablesAndParserKnowNoPass) {
  EXPECT_EQ(includes_of("stdlib", {"frontend/parse/", "frontend/passes/", "frontend/clang/"}),
            Found{});
  EXPECT_EQ(includes_of("frontend/parse", {"frontend/passes/", "frontend/clang/"}), Found{});
  for (const char *folder : {"frontend/passes", "frontend/clang"})
    EXPECT_EQ(includes_of(folder, {"frontend/parse/", "Gpubt", "antlr4"}), Found{}) << folder;
}

} // namespace
