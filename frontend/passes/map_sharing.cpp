// Which side names, reads and writes each map (see map_sharing.h), and the refusals as a table.
#include "frontend/passes/map_sharing.h"

#include <set>

#include <fmt/format.h>

#include "frontend/ast_walk.h"

namespace gpubt::frontend {
namespace {

// A host BPF map and a device table are two stores, each copied one way only: a plain value both
// sides write would be lost on one of them, a host delete would be undone by the next copy from
// the GPU, and a read of a shared aggregation would see one side's part only.
struct Refusal {
  MapSharing sharing;
  const char *format; // {0}: the map's name
};
constexpr Refusal kRefusals[] = {
    {MapSharing::GpuWritten,
     "map {0} is written by both gpu and host probes: a plain map is written on one side, host "
     "or GPU, and read on the other"},
    {MapSharing::ToHostCleared,
     "map {0} is written by gpu probes: host probes can read and print it but not delete from, "
     "clear or zero it (the GPU's table is copied over the host's at each synchronization)"},
    {MapSharing::GpuAggregationUsed,
     "map {0} is an aggregation gpu probes update: host probes can read, print(), clear() and "
     "zero() it (not clear() or zero() a min() or max()), but not delete() from it"},
    {MapSharing::AggregationRead,
     "map {0} is an aggregation updated by both host and gpu probes: probes cannot read, clear "
     "or delete from it yet (each side holds its own part; print() shows them merged)"},
};

struct Sides {
  bool host = false, gpu = false;
};

// A probe with host and gpu attach points runs on both sides.
Sides sides_of(const Probe &p) {
  Sides s;
  for (const auto &ap : p.attach_points)
    (is_gpu(ap.provider) ? s.gpu : s.host) = true;
  return s;
}

void first(const Node *&slot, const Node *n) {
  if (!slot)
    slot = n;
}

// The functions that remove a map's entries or zero its values.
bool is_deleter(const CallExpr &call) {
  return call.id == FunctionId::Delete || call.id == FunctionId::Clear ||
         call.id == FunctionId::Zero;
}

void scan_probe(const Probe &p, std::map<std::string, MapSides> &out) {
  Sides sides = sides_of(p);
  std::set<const Expr *> targets, writes; // updated without being read / written at all
  std::set<const Expr *> deletes;         // a deleter's map argument
  std::set<const Expr *> prints;          // print()'s map argument
  std::set<const Expr *> resets;          // clear()'s and zero()'s
  if (p.body)
    for_each_stmt(static_cast<const Stmt &>(*p.body), [&](const Stmt &s) {
      if (s.kind != StmtKind::MapAssign)
        return;
      const auto &a = s.as<MapAssignStmt>();
      writes.insert(a.map.get());
      if (!a.compound)
        targets.insert(a.map.get());
    });
  for_each_expr(p, [&](const Expr &e) {
    if (e.kind == ExprKind::Unary && e.as<UnaryExpr>().operand->kind == ExprKind::Map) {
      if (is_step(e.as<UnaryExpr>().op))
        writes.insert(e.as<UnaryExpr>().operand.get());
    }
    if (e.kind == ExprKind::Call && is_deleter(e.as<CallExpr>()) &&
        !e.as<CallExpr>().args.empty())
      deletes.insert(e.as<CallExpr>().args[0].get());
    if (e.kind == ExprKind::Call && e.as<CallExpr>().id == FunctionId::Print &&
        !e.as<CallExpr>().args.empty())
      prints.insert(e.as<CallExpr>().args[0].get());
    if (e.kind == ExprKind::Call &&
        (e.as<CallExpr>().id == FunctionId::Clear || e.as<CallExpr>().id == FunctionId::Zero) &&
        !e.as<CallExpr>().args.empty())
      resets.insert(e.as<CallExpr>().args[0].get());
  });
  for_each_expr(p, [&](const Expr &e) {
    if (e.kind != ExprKind::Map)
      return;
    MapSides &m = out[e.as<MapExpr>().name];
    if (sides.host) {
      first(m.host_use, &e);
      if (prints.count(&e))
        ;
      else if (resets.count(&e))
        first(m.host_reset, &e);
      else
        first(m.host_other, &e);
      if (writes.count(&e))
        first(m.host_write, &e);
      if (deletes.count(&e))
        first(m.host_delete, &e);
      if (deletes.count(&e) && !resets.count(&e))
        first(m.host_remove, &e);
    }
    if (sides.gpu) {
      first(m.gpu_use, &e);
      if (writes.count(&e))
        first(m.gpu_write, &e);
    }
    if (!targets.count(&e) &&
        !(sides.host && !sides.gpu && (prints.count(&e) || resets.count(&e)))) {
      first(m.read, &e);
      if (sides.gpu)
        first(m.gpu_read, &e);
    }
  });
}

// AGG: the map's aggregation (TypeKind::None: a plain map).
MapSharing classify(const MapSides &m, frontend::TypeKind agg) {
  bool aggregate = agg != TypeKind::None;
  // clear()/zero() by host probes: the host subtracts the values at that moment from the GPU's
  // (runtime/gpu/device_maps.h), which cannot undo a min or a max.
  bool resettable = agg != TypeKind::Min && agg != TypeKind::Max;
  if (!m.gpu_use)
    return MapSharing::HostOnly;
  // Printed, cleared or zeroed by host probes: the GPU's values as the agents send them.
  if (!m.host_use || (aggregate && !m.host_other && (!m.host_reset || resettable)))
    return aggregate && m.host_write ? MapSharing::Aggregation : MapSharing::GpuOnly;
  // Read by host probes too: the tracer copies the GPU's values into its BPF map (mirrored).
  if (aggregate && !m.host_write)
    return m.host_remove || (m.host_reset && !resettable) ? MapSharing::GpuAggregationUsed
                                                          : MapSharing::GpuOnly;
  if (aggregate)
    return m.read ? MapSharing::AggregationRead : MapSharing::Aggregation;
  if (!m.gpu_write)
    return MapSharing::FromHost;
  if (m.host_write)
    return MapSharing::GpuWritten;
  return m.host_delete ? MapSharing::ToHostCleared : MapSharing::ToHost;
}

} // namespace

std::map<std::string, MapSides> map_sharing(const Program &program, const SemanticInfo &info) {
  std::map<std::string, MapSides> out;
  for (const auto &p : program.probes)
    scan_probe(*p, out);
  for (auto &[name, m] : out) {
    auto it = info.maps.find(name);
    bool aggregate = it != info.maps.end() && it->second.value.is_aggregate();
    m.sharing = classify(m, aggregate ? it->second.value.kind : TypeKind::None);
  }
  return out;
}

std::string map_sharing_error(const std::string &map, const MapSides &sides) {
  for (const auto &r : kRefusals)
    if (r.sharing == sides.sharing)
      return fmt::format(fmt::runtime(r.format), map);
  return "";
}

void check_map_sharing(const Program &program, const SemanticInfo &info, Diagnostics &diags) {
  for (const auto &[name, m] : map_sharing(program, info)) {
    std::string msg = map_sharing_error(name, m);
    if (msg.empty())
      continue;
    const Node *at = m.sharing == MapSharing::GpuWritten      ? m.gpu_write
                     : m.sharing == MapSharing::ToHostCleared ? m.host_delete
                     : m.sharing == MapSharing::GpuAggregationUsed
                         ? (m.host_remove ? m.host_remove : m.host_reset)
                         : m.read;
    diags.error(at->span, msg);
  }
}

} // namespace gpubt::frontend
