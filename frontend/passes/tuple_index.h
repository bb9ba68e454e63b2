// `.N` on a tuple: the index N, read without std::stoul's exceptions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace gpubt::frontend {

// N, or SIZE_MAX when FIELD is not a small decimal (`$t.99999999999999999999` is past any tuple
// and must be reported, not throw out of the type passes).
inline size_t tuple_index(const std::string &field) {
  if (field.empty() || field.size() > 9 ||
      field.find_first_not_of("0123456789") != std::string::npos)
    return SIZE_MAX;
  return std::stoul(field);
}

} // namespace gpubt::frontend
