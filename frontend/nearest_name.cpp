// Did-you-mean: the nearest of a list of names by edit distance.
#include "frontend/nearest_name.h"

#include <algorithm>

namespace gpubt::frontend {
namespace {

// Optimal string alignment distance: Levenshtein's edits plus a swap of two neighbouring
// letters as one edit ("cuont" is one edit from "count", as a typist slips).
size_t edit_distance(const std::string &a, const std::string &b) {
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

// B is A with two neighbouring letters swapped ("tdi" for "tid").
bool neighbours_swapped(const std::string &a, const std::string &b) {
  if (a.size() != b.size())
    return false;
  size_t i = std::mismatch(a.begin(), a.end(), b.begin()).first - a.begin();
  return i + 1 < a.size() && a[i] == b[i + 1] && a[i + 1] == b[i] &&
         a.compare(i + 2, std::string::npos, b, i + 2, std::string::npos) == 0;
}

} // namespace

std::vector<std::string> nearest_names(const std::string &name,
                                       const std::vector<std::string> &candidates, size_t max) {
  if (name.empty() || max == 0)
    return {};
  size_t limit = std::min<size_t>(2, (name.size() - 1) / 3);
  std::vector<std::pair<size_t, const std::string *>> near;
  for (const auto &c : candidates) {
    if (c.size() > name.size() + limit || c.size() + limit < name.size())
      continue;
    // A short name (tid, pid, cpu) allows no edit, but a swap of two of its letters is the
    // typist's slip, not another word.
    size_t d = edit_distance(name, c);
    bool slip = d == 1 && name.size() >= 3 && neighbours_swapped(name, c);
    if (d > 0 && (d <= limit || slip) &&
        std::none_of(near.begin(), near.end(), [&](const auto &n) { return *n.second == c; }))
      near.emplace_back(d, &c);
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const auto &x, const auto &y) { return x.first < y.first; });
  std::vector<std::string> names;
  for (size_t i = 0; i < near.size() && i < max; ++i)
    names.push_back(*near[i].second);
  return names;
}

std::string nearest_name(const std::string &name, const std::vector<std::string> &candidates) {
  auto near = nearest_names(name, candidates, 1);
  return near.empty() ? "" : near[0];
}

std::string did_you_mean_hint(const std::vector<std::string> &near) {
  std::string hint;
  for (size_t i = 0; i < near.size(); ++i)
    hint += std::string(i == 0 ? "did you mean " : i + 1 == near.size() ? " or " : ", ") + "'" +
            near[i] + "'";
  return hint.empty() ? "" : hint + "?";
}

std::string did_you_mean(const std::string &name, const std::vector<std::string> &candidates) {
  std::string hint = did_you_mean_hint(nearest_names(name, candidates, 1));
  return hint.empty() ? "" : " (" + hint + ")";
}

} // namespace gpubt::frontend
