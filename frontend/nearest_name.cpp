// Did-you-mean: the nearest of a list of names by edit distance.
#include "frontend/nearest_name.h"

#include <algorithm>

namespace gpubt::frontend {
namespace {

size_t edit_distance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

} // namespace

std::string nearest_name(const std::string &name, const std::vector<std::string> &candidates) {
  if (name.empty())
    return "";
  size_t limit = std::min<size_t>(2, (name.size() - 1) / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const auto &c : candidates) {
    if (c.size() > name.size() + limit || c.size() + limit < name.size())
      continue;
    size_t d = edit_distance(name, c);
    if (d < best_distance && d > 0) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

} // namespace gpubt::frontend

namespace gpubt::frontend {

std::string did_you_mean(const std::string &name, const std::vector<std::string> &candidates) {
  std::string near = nearest_name(name, candidates);
  return near.empty() ? "" : " (did you mean '" + near + "'?)";
}

} // namespace gpubt::frontend
