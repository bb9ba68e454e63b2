// Did-you-mean for misspelt names: probe types, functions, builtins, enum constants, options,
// tracepoints, symbols, kernels. The one place that measures nearness and words the hint.
#pragma once
#include <string>
#include <vector>

namespace gpubt::frontend {

// The candidates closest to NAME, at most MAX of them, nearest first (ties in candidate order,
// each name once), if close enough to be a misspelling: at most 2 edits (an insertion, deletion,
// substitution or swap of neighbours) and fewer than a third of NAME's length, or a swap of
// neighbours in a name of 3 or more letters ("tdi": 'tid'); empty if none.
std::vector<std::string> nearest_names(const std::string &name,
                                       const std::vector<std::string> &candidates, size_t max);

// The nearest of them, or empty.
std::string nearest_name(const std::string &name, const std::vector<std::string> &candidates);

// "did you mean 'a'?", "did you mean 'a' or 'b'?", "did you mean 'a', 'b' or 'c'?"; "" for none.
std::string did_you_mean_hint(const std::vector<std::string> &near);

// " (did you mean 'NEAR'?)" for the nearest candidate, or "" when none is near.
std::string did_you_mean(const std::string &name, const std::vector<std::string> &candidates);

} // namespace gpubt::frontend
