// The seams between codegen's folders hold: the layout pass and the lowering core know no back
// end, and neither back end includes the other (docs/ARCHITECTURE.md, "Lowering").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// "FILE: #include LINE" for each include in FOLDER's sources that names one of FORBIDDEN.
std::vector<std::string> includes_of(const std::string &folder,
                                     const std::vector<std::string> &forbidden) {
  std::vector<std::string> found;
  for (const auto &entry : fs::directory_iterator(fs::path(GPUBT_SOURCE_DIR) / folder)) {
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("#include ", 0) != 0)
        continue;
      std::string path = line.substr(10); // past the quote or angle bracket
      for (const auto &f : forbidden)
        if (path.rfind(f, 0) == 0)
          found.push_back(folder + "/" + entry.path().filename().string() + ": " + line);
    }
  }
  return found;
}

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
