#include "frontend/passes/check_attach_points.h"

#include <algorithm>

namespace gpubt::frontend {

void check_attach_points(Program &program, const AttachPointLookup &lookup, Diagnostics &diags) {
  for (auto &probe : program.probes) {
    auto &points = probe->attach_points;
    for (size_t i = 0; i < points.size();) {
      AttachPointStatus st = lookup(points[i]);
      if (st.kind == AttachPointStatus::Found) {
        ++i;
        continue;
      }
      std::string text = st.message + (st.hint.empty() ? "" : " (" + st.hint + ")");
      if (points.size() == 1) {
        diags.error(points[i].span, text);
        ++i;
      } else {
        diags.warning(points[i].span, text);
        points.erase(points.begin() + long(i));
      }
    }
  }
}

} // namespace gpubt::frontend

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
