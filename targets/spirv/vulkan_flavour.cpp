// StorageBuffer pointers -> PhysicalStorageBuffer64, placeholder calls -> atomics and clock
// reads (see vulkan_flavour.h).
#include "targets/spirv/vulkan_flavour.h"

#include <cstring>
#include <map>
#include <set>

#include "runtime/abi/spirv_words.h"
#include "targets/spirv/merge_placement.h"

namespace gpubt::targets {

namespace {

using namespace spirv;

struct Placeholder {
  uint32_t opcode = 0, bits = 0;
  bool acq_rel = false; // a read-modify-write that orders other memory
};

// gpubt_spv_atomic_<opcode>_<bits>
bool parse_placeholder(const std::string &name, Placeholder &out) {
  size_t n = std::strlen(kAtomicPlaceholder);
  if (name.compare(0, n, kAtomicPlaceholder) != 0)
    return false;
  size_t suffix = std::strlen(kAcqRelSuffix);
  out.acq_rel =
      name.size() > suffix && name.compare(name.size() - suffix, suffix, kAcqRelSuffix) == 0;
  return std::sscanf(name.c_str() + n, "%u_%u", &out.opcode, &out.bits) == 2 &&
         (out.bits == 32 || out.bits == 64);
}

// gpubt_spv_clock_<scope>: the scope, or 0.
uint32_t clock_scope(const std::string &name) {
  size_t n = std::strlen(kClockPlaceholder);
  unsigned scope = 0;
  if (name.compare(0, n, kClockPlaceholder) != 0 ||
      std::sscanf(name.c_str() + n, "%u", &scope) != 1)
    return 0;
  return scope;
}

// The ids of an atomic's scope and memory semantics constants.
struct AtomicOperands {
  uint32_t scope = 0, relaxed = 0, acquire = 0, release = 0, acq_rel = 0;
};

// The atomic instruction for CALL ([result type, result, function, pointer, args...]) through
// POINTER (already cast to the value's pointer type).
Inst atomic_for(const AtomicOperands &o, const Placeholder &ph, const std::vector<uint32_t> &call,
                uint32_t pointer) {
  switch (ph.opcode) {
  case OpAtomicLoad:
    return {OpAtomicLoad, {call[0], call[1], pointer, o.scope, o.acquire}};
  case OpAtomicStore:
    return {OpAtomicStore, {pointer, o.scope, o.release, call[4]}};
  case OpAtomicCompareExchange: // placeholder (p, expected, new); SPIR-V: value, comparator
    return {OpAtomicCompareExchange,
            {call[0], call[1], pointer, o.scope, o.acq_rel, o.acquire, call[5], call[4]}};
  default:
    return {uint16_t(ph.opcode),
            {call[0], call[1], pointer, o.scope, ph.acq_rel ? o.acq_rel : o.relaxed, call[4]}};
  }
}

} // namespace

Result<std::vector<uint32_t>> to_vulkan_flavour(const std::vector<uint32_t> &words) {
  Module m;
  if (!m.parse(words.data(), words.size()))
    return make_error("BUG: the SPIR-V back end emitted no SPIR-V module");

  std::map<uint32_t, Placeholder> placeholders; // function id -> atomic
  std::map<uint32_t, uint32_t> clocks;          // function id -> scope
  std::set<uint32_t> widths;
  for (const auto &in : m.insts)
    if (in.op == OpName) {
      Placeholder ph;
      if (parse_placeholder(string_at(in, 1), ph)) {
        placeholders[in.w[0]] = ph;
        widths.insert(ph.bits);
      } else if (uint32_t scope = clock_scope(string_at(in, 1))) {
        clocks[in.w[0]] = scope;
      }
    }
  auto is_placeholder = [&](uint32_t id) { return placeholders.count(id) || clocks.count(id); };

  // Types and constants first: adding them moves instructions.
  std::map<uint32_t, uint32_t> value_ptr; // bits -> PhysicalStorageBuffer pointer type
  for (uint32_t bits : widths)
    value_ptr[bits] = m.type(OpTypePointer, {StorageBuffer, m.uint_type(bits)});
  AtomicOperands ops{m.u32(ScopeDevice), m.u32(0), m.u32(SemanticsAcquire | SemanticsUniformMemory),
                     m.u32(SemanticsRelease | SemanticsUniformMemory),
                     m.u32(SemanticsAcqRel | SemanticsUniformMemory)};
  std::map<uint32_t, uint32_t> scope_ids; // scope -> its constant
  for (const auto &[fn, scope] : clocks)
    scope_ids[scope] = m.u32(scope);

  std::vector<Inst> out;
  bool skipping = false, loads8 = false;
  std::map<uint32_t, uint32_t> int_width;
  for (auto &in : m.insts) {
    if (in.op == OpFunction && is_placeholder(in.w[1]))
      skipping = true;
    if (skipping) {
      skipping = in.op != OpFunctionEnd;
      continue;
    }
    if ((in.op == OpName || in.op == OpDecorate) && is_placeholder(in.w[0]))
      continue;
    if (in.op == OpTypeInt)
      int_width[in.w[0]] = in.w[1];
    if (in.op == OpLoad && int_width[in.w[0]] == 8)
      loads8 = true;
    if (in.op == OpFunctionCall && placeholders.count(in.w[2])) {
      const Placeholder &ph = placeholders[in.w[2]];
      uint32_t cast = m.fresh_id();
      out.push_back({OpBitcast, {value_ptr[ph.bits], cast, in.w[3]}});
      out.push_back(atomic_for(ops, ph, in.w, cast));
      continue;
    }
    if (in.op == OpFunctionCall && clocks.count(in.w[2])) {
      out.push_back({OpReadClockKHR, {in.w[0], in.w[1], scope_ids[clocks[in.w[2]]]}});
      continue;
    }
    if (in.op == OpMemoryModel)
      in.w = {AddressingPhysicalStorageBuffer64, MemoryGLSL450};
    if ((in.op == OpTypePointer || in.op == OpTypeForwardPointer) && in.w[1] == StorageBuffer)
      in.w[1] = StoragePhysicalBuffer;
    out.push_back(std::move(in));
  }
  m.insts = std::move(out);
  place_merges_before_branches(m.insts);

  // OpPtrAccessChain on a PhysicalStorageBuffer pointer needs its element's stride.
  std::vector<Inst> strides;
  for (const auto &in : m.insts)
    if (in.op == OpTypePointer && in.w[1] == StoragePhysicalBuffer && int_width.count(in.w[2]))
      strides.push_back({OpDecorate, {in.w[0], DecorationArrayStride, int_width[in.w[2]] / 8}});
  m.insts.insert(m.insts.begin() + m.annotations_end(), strides.begin(), strides.end());

  m.add_extension("SPV_KHR_physical_storage_buffer");
  m.add_capability(CapPhysicalStorageBufferAddresses);
  if (widths.count(64))
    m.add_capability(CapInt64Atomics);
  if (!clocks.empty()) {
    m.add_extension("SPV_KHR_shader_clock");
    m.add_capability(CapShaderClockKHR);
  }
  if (loads8) {
    m.add_extension("SPV_KHR_8bit_storage");
    m.add_capability(CapStorageBuffer8BitAccess);
  }
  return m.words();
}

} // namespace gpubt::targets
