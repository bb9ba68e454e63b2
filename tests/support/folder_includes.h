// The includes of a source folder that name a forbidden prefix: how the folder rules
// (STYLE.md's arrows, docs/ARCHITECTURE.md) are tested.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace gpubt::testing {

// "FILE: #include LINE" for each include in FOLDER's sources (not its subfolders') that names
// one of FORBIDDEN.
inline std::vector<std::string> includes_of(const std::string &folder,
                                            const std::vector<std::string> &forbidden) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  for (const auto &entry : fs::directory_iterator(fs::path(GPUBT_SOURCE_DIR) / folder)) {
    if (!entry.is_regular_file())
      continue;
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

} // namespace gpubt::testing
