// -B and --no-warnings.
#include "driver/output_setup.h"

#include <cstdio>

namespace gpubt::driver {

void apply_buffering(BufferMode mode) {
  switch (mode) {
  case BufferMode::Line:
    std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
    break;
  case BufferMode::Full:
    std::setvbuf(stdout, nullptr, _IOFBF, BUFSIZ);
    break;
  case BufferMode::None:
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    break;
  case BufferMode::Unset:
    break;
  }
}

int WarningFilter::overflow(int c) {
  if (c == traits_type::eof())
    return 0;
  line_ += static_cast<char>(c);
  if (c == '\n') {
    if (line_.rfind("WARNING: ", 0) != 0)
      target_ << line_;
    line_.clear();
  }
  return c;
}

int WarningFilter::sync() {
  if (!line_.empty() && line_.rfind("WARNING: ", 0) != 0)
    target_ << line_;
  line_.clear();
  target_.flush();
  return 0;
}

} // namespace gpubt::driver
