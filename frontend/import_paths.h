// Where `import "PATH";` leads: the files a path names, found from the importing script's
// directory, or a sentence saying why they cannot be imported. Only the filesystem, no parsing.
#pragma once
#include <string>
#include <vector>

namespace gpubt::frontend {

enum class ImportKind { Script, Header }; // .bt, .h

struct ImportTarget {
  std::string path; // canonical: the same file imported twice has the same path
  ImportKind kind;
};

struct ResolvedImport {
  std::vector<ImportTarget> files; // a directory's supported files in name order
  std::string error;               // empty when files are good
};

// WRITTEN as the script has it; SCRIPT is the importing script's path ("stdin" for -e: the
// current directory then, as for any name without a directory).
ResolvedImport resolve_import(const std::string &written, const std::string &script);

// The whole file, or false with a sentence in `error`.
bool read_import(const std::string &path, std::string &text, std::string &error);

} // namespace gpubt::frontend
