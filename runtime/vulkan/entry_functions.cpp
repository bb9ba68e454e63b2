// Entry points that share a function get a copy each (see entry_functions.h). SPIRV-Tools'
// parser says which operand words are ids, so literals are never renumbered.
#include "runtime/vulkan/entry_functions.h"

#include <map>

#include <spirv-tools/libspirv.h>

#include "runtime/abi/spirv_words.h"

namespace gpubt::runtime::vulkan {
namespace {

using namespace spirv;

// One instruction's words (opcode word first) and which of them are ids.
struct Parsed {
  std::vector<uint32_t> words;
  std::vector<uint16_t> ids; // offsets into words
  uint32_t result = 0;       // the id it defines, or 0
  uint16_t op() const { return uint16_t(words[0] & 0xffff); }
};

bool is_id(spv_operand_type_t t) {
  return t == SPV_OPERAND_TYPE_ID || t == SPV_OPERAND_TYPE_TYPE_ID ||
         t == SPV_OPERAND_TYPE_RESULT_ID || t == SPV_OPERAND_TYPE_MEMORY_SEMANTICS_ID ||
         t == SPV_OPERAND_TYPE_SCOPE_ID;
}

Result<std::vector<Parsed>> parse(const std::vector<uint32_t> &module) {
  std::vector<Parsed> out;
  spv_context context = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  auto each = [](void *user, const spv_parsed_instruction_t *in) -> spv_result_t {
    Parsed p{{in->words, in->words + in->num_words}, {}, in->result_id};
    for (uint16_t i = 0; i < in->num_operands; ++i)
      if (is_id(in->operands[i].type))
        p.ids.push_back(in->operands[i].offset);
    static_cast<std::vector<Parsed> *>(user)->push_back(std::move(p));
    return SPV_SUCCESS;
  };
  spv_result_t r = spvBinaryParse(context, &out, module.data(), module.size(), nullptr, each,
                                  nullptr);
  spvContextDestroy(context);
  if (r != SPV_SUCCESS)
    return make_error("the shader module is not SPIR-V the linker reads (" + std::to_string(r) +
                      ")");
  return out;
}

// IN with the ids RENAME maps renamed.
Parsed renamed(const Parsed &in, const std::map<uint32_t, uint32_t> &rename) {
  Parsed out = in;
  for (uint16_t at : out.ids)
    if (auto it = rename.find(out.words[at]); it != rename.end())
      out.words[at] = it->second;
  return out;
}

bool names_any(const Parsed &in, const std::map<uint32_t, uint32_t> &rename) {
  for (uint16_t at : in.ids)
    if (rename.count(in.words[at]))
      return true;
  return false;
}

// A copy of function FN (its result ids fresh from BOUND), appended to INSTS; the module-level
// instructions naming its ids (execution modes, names, decorations) copied beside theirs.
// Returns the copy's id, or 0 where the module has no such function.
uint32_t copy_function(std::vector<Parsed> &insts, uint32_t fn, uint32_t &bound) {
  size_t begin = 0;
  while (begin < insts.size() && !(insts[begin].op() == OpFunction && insts[begin].words[2] == fn))
    ++begin;
  size_t end = begin;
  while (end < insts.size() && insts[end].op() != OpFunctionEnd)
    ++end;
  if (end == insts.size())
    return 0;
  std::map<uint32_t, uint32_t> rename; // every id the function defines -> a fresh one
  for (size_t i = begin; i < end; ++i)
    if (insts[i].result)
      rename[insts[i].result] = bound++;
  std::vector<Parsed> body;
  for (size_t i = begin; i <= end && i < insts.size(); ++i)
    body.push_back(renamed(insts[i], rename));
  size_t first_fn = 0;
  while (first_fn < insts.size() && insts[first_fn].op() != OpFunction)
    ++first_fn;
  std::vector<Parsed> out;
  for (size_t i = 0; i < first_fn; ++i) {
    out.push_back(insts[i]);
    if (insts[i].op() != OpEntryPoint && names_any(insts[i], rename))
      out.push_back(renamed(insts[i], rename));
  }
  out.insert(out.end(), insts.begin() + first_fn, insts.end());
  out.insert(out.end(), body.begin(), body.end());
  insts = std::move(out);
  return rename.at(fn);
}

} // namespace

Result<std::vector<uint32_t>> give_entries_own_functions(const std::vector<uint32_t> &module,
                                                         const std::set<std::string> &entries) {
  if (module.size() < kHeaderWords)
    return make_error("the shader module is not SPIR-V");
  auto insts = parse(module);
  if (!insts)
    return make_error(insts.error());
  std::map<uint32_t, int> named; // function -> OpEntryPoints naming it
  for (const auto &in : *insts)
    if (in.op() == OpEntryPoint)
      ++named[in.words[2]];
  uint32_t bound = module[3];
  bool changed = false;
  for (size_t i = 0; i < insts->size(); ++i) {
    Inst ep{(*insts)[i].op(), {(*insts)[i].words.begin() + 1, (*insts)[i].words.end()}};
    if (ep.op != OpEntryPoint || named[ep.w[1]] < 2 || !entries.count(string_at(ep, 2)))
      continue;
    --named[ep.w[1]];
    uint32_t copy = copy_function(*insts, ep.w[1], bound);
    if (!copy)
      return make_error("entry point " + string_at(ep, 2) + " names no function");
    (*insts)[i].words[2] = copy;
    changed = true;
  }
  if (!changed)
    return module;
  std::vector<uint32_t> out(module.begin(), module.begin() + kHeaderWords);
  out[3] = bound;
  for (const auto &in : *insts)
    out.insert(out.end(), in.words.begin(), in.words.end());
  return out;
}

} // namespace gpubt::runtime::vulkan
