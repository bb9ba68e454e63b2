// SPIR-V editing of the program's module, then SPIRV-Tools' linker (see link_probes.h).
#include "runtime/vulkan/link_probes.h"

#include <algorithm>
#include <map>
#include <set>

#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/linker.hpp>

#include "runtime/abi/device_abi.h"
#include "runtime/abi/spirv_words.h"
#include "runtime/vulkan/entry_functions.h"

namespace gpubt::runtime::vulkan {

using namespace spirv;

namespace {

constexpr uint32_t kBuiltInWorkgroupSize = 25, kMemoryVulkan = 3, kLinkageImport = 1,
                   kSpirv13 = 0x00010300;

// OpEntryPoint operands: model, function, name (words), interface ids.
size_t name_words(const Inst &ep) { return string_at(ep, 2).size() / 4 + 1; }

struct Builtins {
  uint32_t workgroup_id = 0, local_id = 0, num_workgroups = 0, subgroup_local_id = 0, v3uint = 0;
};

// The Input variable decorated BUILTIN, of type TYPE, added if the module has none; listed in
// ENTRY's interface either way.
Result<uint32_t> builtin_var(Module &m, Inst &entry_point, uint32_t builtin, uint32_t type) {
  uint32_t ptr = m.type(OpTypePointer, {StorageInput, type});
  uint32_t var = 0;
  for (const auto &in : m.insts)
    if (in.op == OpDecorate && in.w.size() == 3 && in.w[1] == DecorationBuiltIn && in.w[2] == builtin)
      var = in.w[0];
  if (var) {
    for (const auto &in : m.insts)
      if (in.op == OpVariable && in.w[1] == var && in.w[0] != ptr)
        return make_error("builtin " + std::to_string(builtin) + " is not of the type it should be");
  } else {
    var = m.fresh_id();
    m.insts.insert(m.insts.begin() + m.globals_end(), Inst{OpVariable, {ptr, var, StorageInput}});
    m.insts.insert(m.insts.begin() + m.annotations_end(),
                   Inst{OpDecorate, {var, DecorationBuiltIn, builtin}});
  }
  size_t first = 2 + name_words(entry_point);
  bool listed = false;
  for (size_t i = first; i < entry_point.w.size(); ++i)
    listed = listed || entry_point.w[i] == var;
  if (!listed)
    entry_point.w.push_back(var);
  return var;
}

// Instructions computing the probe arguments in ENTRY's function, and the call of FN.
std::vector<Inst> call_probe(Module &m, uint32_t fn, uint32_t ctx, const Builtins &b,
                             const uint32_t size[3], uint32_t size_composite,
                             uint32_t subgroup) {
  uint32_t uint_t = m.uint_type(32), ulong_t = m.uint_type(64);
  std::vector<Inst> out;
  std::vector<uint32_t> args(GPUBT_SPIRV_ARGS);
  args[0] = ctx;
  args[1] = m.u64(0);
  auto load3 = [&](uint32_t var, uint32_t at) {
    uint32_t v = m.fresh_id();
    out.push_back({OpLoad, {b.v3uint, v, var}});
    for (uint32_t i = 0; i < 3; ++i) {
      args[at + i] = m.fresh_id();
      out.push_back({OpCompositeExtract, {uint_t, args[at + i], v, i}});
    }
  };
  load3(b.workgroup_id, GPUBT_SPIRV_ARG_WORKGROUP_ID);
  load3(b.local_id, GPUBT_SPIRV_ARG_LOCAL_ID);
  load3(b.num_workgroups, GPUBT_SPIRV_ARG_NUM_WORKGROUPS);
  for (uint32_t i = 0; i < 3; ++i) {
    if (size_composite) {
      args[GPUBT_SPIRV_ARG_WORKGROUP_SIZE + i] = m.fresh_id();
      out.push_back(
          {OpCompositeExtract, {uint_t, args[GPUBT_SPIRV_ARG_WORKGROUP_SIZE + i], size_composite, i}});
    } else {
      args[GPUBT_SPIRV_ARG_WORKGROUP_SIZE + i] = size[i];
    }
  }
  args[GPUBT_SPIRV_ARG_SUBGROUP_SIZE] = subgroup;
  args[GPUBT_SPIRV_ARG_SUBGROUP_LOCAL_ID] = m.fresh_id();
  out.push_back({OpLoad, {uint_t, args[GPUBT_SPIRV_ARG_SUBGROUP_LOCAL_ID], b.subgroup_local_id}});
  std::vector<uint32_t> call{uint_t, m.fresh_id(), fn};
  call.insert(call.end(), args.begin(), args.end());
  out.push_back({OpFunctionCall, std::move(call)});
  (void)ulong_t;
  return out;
}

// Makes MODULE able to hold the probes: PhysicalStorageBuffer64 addressing, 64-bit integers,
// imports, subgroup builtins and operations (SPIR-V 1.3; the layer asks for Vulkan 1.2).
Status prepare_module(Module &m) {
  size_t mm = m.find(OpMemoryModel);
  if (mm == m.insts.size())
    return make_error("no OpMemoryModel");
  auto &w = m.insts[mm].w;
  if (w[1] == kMemoryVulkan)
    return make_error("shaders on the Vulkan memory model are not instrumented yet");
  if (w[0] != AddressingLogical && w[0] != AddressingPhysicalStorageBuffer64)
    return make_error("addressing model " + std::to_string(w[0]) + " is not a shader's");
  w[0] = AddressingPhysicalStorageBuffer64;
  m.add_extension("SPV_KHR_physical_storage_buffer");
  m.add_capability(CapLinkage);
  m.add_capability(CapInt64);
  m.add_capability(CapPhysicalStorageBufferAddresses);
  m.add_capability(CapGroupNonUniform);
  m.header[1] = std::max(m.header[1], kSpirv13);
  return Ok{};
}

} // namespace

std::vector<std::string> compute_entry_points(const std::vector<uint32_t> &module) {
  Module m;
  std::vector<std::string> out;
  if (!m.parse(module.data(), module.size()))
    return out;
  for (const auto &in : m.insts)
    if (in.op == OpEntryPoint && in.w[0] == ExecutionModelGLCompute)
      out.push_back(string_at(in, 2));
  return out;
}

Result<std::vector<uint32_t>> link_probes(const std::vector<uint32_t> &module,
                                          const std::vector<uint32_t> &probes,
                                          const std::vector<EntryProbes> &entries,
                                          uint32_t subgroup_size) {
  Module m, p;
  std::set<std::string> names;
  for (const auto &e : entries)
    names.insert(e.entry);
  auto own = give_entries_own_functions(module, names); // each its own probes
  if (!own)
    return make_error(own.error());
  if (!m.parse(own->data(), own->size()))
    return make_error("the shader module is not SPIR-V");
  if (!p.parse(probes.data(), probes.size()))
    return make_error("the probe module is not SPIR-V");
  if (auto st = prepare_module(m); !st)
    return make_error(st.error());

  uint32_t uint_t = m.uint_type(32), ulong_t = m.uint_type(64);
  Builtins b;
  b.v3uint = m.type(OpTypeVector, {uint_t, 3});
  std::vector<uint32_t> params(GPUBT_SPIRV_ARGS, uint_t);
  params[0] = params[1] = ulong_t;
  params.insert(params.begin(), uint_t);
  uint32_t fn_type = m.type(OpTypeFunction, params);
  uint32_t subgroup = m.u32(subgroup_size);

  // One import per probe function, declared before the first function definition.
  std::map<std::string, uint32_t> imports;
  for (const auto &e : entries)
    for (const auto &c : e.calls)
      if (c.point.kind != abi::ProbePointKind::Entry && c.point.kind != abi::ProbePointKind::Exit)
        return make_error(std::string("the Vulkan layer cannot insert a probe at ") +
                          abi::probe_point_name(c.point.kind));
      else if (!imports.count(c.function)) {
        uint32_t id = m.fresh_id();
        imports[c.function] = id;
        std::vector<Inst> decl{{OpFunction, {uint_t, id, 0, fn_type}}};
        for (size_t i = 1; i < params.size(); ++i)
          decl.push_back({OpFunctionParameter, {params[i], m.fresh_id()}});
        decl.push_back({OpFunctionEnd, {}});
        m.insts.insert(m.insts.begin() + m.find(OpFunction), decl.begin(), decl.end());
        auto deco = string_words(c.function);
        deco.insert(deco.begin(), {id, DecorationLinkageAttributes});
        deco.push_back(kLinkageImport);
        m.insts.insert(m.insts.begin() + m.annotations_end(), Inst{OpDecorate, deco});
      }

  uint32_t size_composite = 0;
  for (const auto &in : m.insts)
    if (in.op == OpDecorate && in.w.size() == 3 && in.w[1] == DecorationBuiltIn &&
        in.w[2] == kBuiltInWorkgroupSize)
      size_composite = in.w[0];

  for (const auto &e : entries) {
    size_t ep = m.insts.size();
    for (size_t i = 0; i < m.insts.size(); ++i)
      if (m.insts[i].op == OpEntryPoint && string_at(m.insts[i], 2) == e.entry)
        ep = i;
    if (ep == m.insts.size())
      return make_error("no entry point " + e.entry);
    Inst entry_point = m.insts[ep];
    uint32_t fn = entry_point.w[1];
    auto wg = builtin_var(m, entry_point, BuiltInWorkgroupId, b.v3uint);
    auto lid = builtin_var(m, entry_point, BuiltInLocalInvocationId, b.v3uint);
    auto nwg = builtin_var(m, entry_point, BuiltInNumWorkgroups, b.v3uint);
    auto lane = builtin_var(m, entry_point, BuiltInSubgroupLocalInvocationId, uint_t);
    for (auto *r : {&wg, &lid, &nwg, &lane})
      if (!*r)
        return make_error(r->error());
    b.workgroup_id = *wg, b.local_id = *lid, b.num_workgroups = *nwg, b.subgroup_local_id = *lane;
    uint32_t size[3] = {m.u32(1), m.u32(1), m.u32(1)};
    bool sized = size_composite != 0;
    for (const auto &in : m.insts)
      if (in.op == OpExecutionMode && in.w[0] == fn && in.w[1] == ExecutionModeLocalSize) {
        for (int i = 0; i < 3; ++i)
          size[i] = m.u32(in.w[2 + i]);
        sized = true;
      }
    if (!sized)
      return make_error(e.entry + " has no LocalSize (LocalSizeId is not read yet)");
    uint32_t ctx = m.u64(e.ctx_address);
    // The calls at entry or at one return, with ids of their own each time (the first time adds
    // the constants they use, so later ones add nothing while the function is rewritten).
    auto calls = [&](bool exit) {
      std::vector<Inst> out;
      for (const auto &c : e.calls)
        if ((c.point.kind == abi::ProbePointKind::Exit) == exit) {
          auto call = call_probe(m, imports[c.function], ctx, b, size, size_composite, subgroup);
          out.insert(out.end(), call.begin(), call.end());
        }
      return out;
    };
    std::vector<Inst> enter = calls(false);
    calls(true);
    // Every index is found again after the constants above were added.
    for (size_t i = 0; i < m.insts.size(); ++i)
      if (m.insts[i].op == OpEntryPoint && string_at(m.insts[i], 2) == e.entry)
        m.insts[i] = entry_point;
    std::vector<Inst> out;
    bool in_fn = false, entered = false;
    for (size_t i = 0; i < m.insts.size(); ++i) {
      auto &in = m.insts[i];
      if (in.op == OpFunction)
        in_fn = in.w[1] == fn;
      if (in_fn && (in.op == OpReturn || in.op == OpReturnValue)) {
        auto leave = calls(true);
        out.insert(out.end(), leave.begin(), leave.end());
      }
      out.push_back(in);
      // At entry: after the first block's label and its OpVariables.
      if (in_fn && !entered && (in.op == OpLabel || in.op == OpVariable) &&
          (i + 1 == m.insts.size() || m.insts[i + 1].op != OpVariable)) {
        out.insert(out.end(), enter.begin(), enter.end());
        entered = true;
      }
    }
    m.insts = std::move(out);
  }

  p.header[1] = m.header[1]; // the program's SPIR-V version: the probes need nothing newer
  spvtools::Context context(SPV_ENV_UNIVERSAL_1_6);
  std::string messages;
  context.SetMessageConsumer([&](spv_message_level_t, const char *, const spv_position_t &,
                                 const char *msg) { messages += std::string(msg) + "; "; });
  std::vector<uint32_t> linked;
  spvtools::LinkerOptions options;
  auto edited = m.words();
  if (spvtools::Link(context, std::vector<std::vector<uint32_t>>{edited, p.words()}, &linked,
                     options) != SPV_SUCCESS)
    return make_error("linking the probes failed: " + messages);
  return linked;
}

} // namespace gpubt::runtime::vulkan
