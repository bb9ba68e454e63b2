// lhist()'s bounds (bpftrace 0.17's messages) and tseries()'s (bpftrace head's).
#include "frontend/passes/check_aggregation_args.h"

#include <string>

#include "frontend/passes/check_messages.h"
#include "stdlib/functions.h"

namespace gpubt::frontend {
namespace {

// bpftrace's limits: more buckets or intervals cost memory and time in every process that
// prints the map.
constexpr int64_t kMaxLhistBuckets = 1000;
constexpr int64_t kMaxTseriesIntervals = 1000000;

struct Checker {
  const CallExpr &c;
  Diagnostics &diags;
  int errors = 0;

  void error(std::string msg) {
    diags.error(c.span, std::move(msg));
    ++errors;
  }

  void lhist() {
    if (c.args.size() != 4)
      return;
    auto min = check::literal_value(*c.args[1]), max = check::literal_value(*c.args[2]),
         step = check::literal_value(*c.args[3]);
    if (!min || !max || !step)
      return;
    if (*min < 0)
      error("lhist() min must be non-negative (provided min " + std::to_string(*min) + ")");
    if (*min > *max)
      error("lhist() min must be less than max (provided min " + std::to_string(*min) +
            " and max " + std::to_string(*max) + ")");
    if (*step < 1)
      error("lhist() step must be >= 1 (" + std::to_string(*step) + " provided)");
    else if (*min >= 0 && *max >= *min && (*max - *min) / *step > kMaxLhistBuckets)
      error("lhist() too many buckets, must be <= " + std::to_string(kMaxLhistBuckets) +
            " (would need " + std::to_string((*max - *min) / *step) + ")");
    else if (*step > *max - *min)
      error("lhist() step is too large for the given range (provided step " +
            std::to_string(*step) + " for range " + std::to_string(*max - *min) + ")");
  }

  void tseries() {
    if (c.args.size() < 3)
      return;
    auto interval = check::literal_value(*c.args[1]), n = check::literal_value(*c.args[2]);
    if (!interval)
      return error("tseries: invalid interval_ns value (must be non-negative literal)");
    if (!n)
      return error("tseries: invalid num_intervals value (must be non-negative literal)");
    if (*interval <= 0)
      return error("tseries() interval_ns must be >= 1 (" + std::to_string(*interval) +
                   " provided)");
    if (*n <= 0)
      return error("tseries() num_intervals must be >= 1 (" + std::to_string(*n) + " provided)");
    if (*n > kMaxTseriesIntervals)
      error("tseries() num_intervals must be < 1000000 (" + std::to_string(*n) + " provided)");
    if (c.args.size() < 4 || c.args[3]->kind != ExprKind::String)
      return;
    const std::string &agg = c.args[3]->as<StringExpr>().value;
    if (agg != "avg" && agg != "max" && agg != "min" && agg != "sum")
      error("tseries() expects one of the following aggregation functions: avg, max, min, sum "
            "(\"" + agg + "\" provided)");
  }
};

} // namespace

int check_aggregation_args(const CallExpr &c, Diagnostics &diags) {
  Checker check{c, diags};
  if (c.id == stdlib::FunctionId::Lhist)
    check.lhist();
  else if (c.id == stdlib::FunctionId::Tseries)
    check.tseries();
  return check.errors;
}

} // namespace gpubt::frontend
