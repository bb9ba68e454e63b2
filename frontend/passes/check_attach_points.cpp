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
