// Did-you-mean for misspelt names: probe types, functions, builtins, tracepoints, symbols.
#pragma once
#include <string>
#include <vector>

namespace gpubt::frontend {

// The candidate closest to NAME by edit distance, if close enough to be a misspelling (at most
// 2 edits, and fewer than a third of NAME's length); empty if none.
std::string nearest_name(const std::string &name, const std::vector<std::string> &candidates);

// " (did you mean 'NEAR'?)" for the nearest candidate, or "" when none is near.
std::string did_you_mean(const std::string &name, const std::vector<std::string> &candidates);

} // namespace gpubt::frontend
