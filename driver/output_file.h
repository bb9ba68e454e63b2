// Where the trace's output goes (-o FILE or stdout), and whether writing it failed: a full disk
// or a file that refuses writes must end the trace with an error, not lose the output silently.
#pragma once
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "runtime/abi/result.h"

namespace gpubt::driver {

class OutputFile {
public:
  // PATH empty: stdout. Otherwise created or truncated now (after the script compiled).
  static Result<std::unique_ptr<OutputFile>> open(const std::string &path);
  virtual ~OutputFile() = default;
  virtual std::ostream &stream() = 0;
  // After a flush: "failed to write output file 'PATH': No space left on device" for the first
  // write that failed, nullopt while every write succeeded.
  virtual std::optional<std::string> write_error() = 0;
};

// Whether PATH names the same file as SCRIPT (gpubt -o s.bt s.bt would overwrite its own script).
bool same_file(const std::string &path, const std::string &script);

} // namespace gpubt::driver
