// Span events of --timeline (see lower_timeline.h).
#include "codegen/bpf/lower_timeline.h"

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_api.h"
#include "codegen/bpf/lower_pystack.h"
#include "codegen/layout/value_type.h"
#include "codegen/bpf/send_event.h"
#include "stdlib/api_types.h"
#include "stdlib/stack_builtins.h"

namespace gpubt::codegen::bpf {

using namespace frontend;

bool is_span_edge(const Program &program, const AttachPoint &ap) {
  if (ap.provider != Provider::Uprobe && ap.provider != Provider::Uretprobe)
    return false;
  Provider other = ap.provider == Provider::Uprobe ? Provider::Uretprobe : Provider::Uprobe;
  for (const auto &p : program.probes)
    for (const auto &o : p->attach_points)
      if (o.provider == other && o.target == ap.target && o.func == ap.func)
        return true;
  return false;
}

namespace {

struct SpanValue {
  std::string name;
  Type type;
  Val val;
  bool address = false; // a pointer or handle: hex in the trace
};

// What this side shows: a catalogued function's arguments at entry, the return value at return
// (typed by the catalog: an error enum by name; else the raw register).
std::vector<SpanValue> span_values(LowerCtx &c) {
  std::vector<SpanValue> out;
  const stdlib::ApiFunction *fn = stdlib::api_function_for(*c.ap);
  if (c.ap->provider == Provider::Uretprobe) {
    Type t = stdlib::api_retval_type(*c.ap).value_or(Type::integer(8, true));
    auto *rax = c.b.CreateAlignedLoad(c.b.getInt64Ty(),
                                      byte_ptr(c, c.regs, stdlib::pt_regs_ax_offset),
                                      llvm::Align(8));
    out.push_back({"retval", t, {normalize(c, rax, t)}});
  } else if (fn) {
    for (const stdlib::ApiParam &p : fn->params) {
      Type t = stdlib::api_param_type(p);
      bool address = p.kind == stdlib::ApiValueKind::Pointer ||
                     p.kind == stdlib::ApiValueKind::Handle ||
                     p.kind == stdlib::ApiValueKind::String;
      out.push_back({std::string(p.name), t, lower_api_param(c, p, t), address});
    }
  }
  // A probe that takes Python frames shows them on its span: which line made the call.
  if (c.ap->provider == Provider::Uprobe && c.probe && probe_takes_python_frames(*c.probe)) {
    Type t = stdlib::stack_type(BuiltinId::Pystack, false, 0);
    out.push_back({"pystack", t, lower_pystack(c, (t.size - 8) / 16)});
  }
  return out;
}

} // namespace

void send_span_edge(LowerCtx &c) {
  const stdlib::ApiFunction *fn = stdlib::api_function_for(*c.ap);
  abi::SpanSpec span;
  span.name = fn ? std::string(fn->name) : c.ap->func;
  span.exit = c.ap->provider == Provider::Uretprobe;
  std::vector<SpanValue> values = span_values(c);
  uint32_t off = sizeof(abi::EventStamp);
  for (const SpanValue &v : values) {
    abi::FormatArg fa;
    fa.type = layout::to_value_type(v.type);
    fa.offset = off;
    off += (fa.type.size + 7) / 8 * 8;
    span.arg_names.push_back(v.name);
    span.args.push_back(fa);
    span.addresses.push_back(v.address);
  }
  uint32_t index = c.spec->spans.size();
  c.spec->spans.push_back(std::move(span));
  send_event(c, abi::EventKind::Span, index, off, [&](llvm::Value *payload) {
    zero_bytes(c, payload, 8, off);
    store_stamp(c, payload);
    const auto &args = c.spec->spans[index].args;
    for (size_t i = 0; i < values.size(); ++i)
      store_value(c, byte_ptr(c, payload, args[i].offset), 8, values[i].type, values[i].val,
                  values[i].type);
  });
}

} // namespace gpubt::codegen::bpf
