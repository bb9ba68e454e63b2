// Parses tracefs format files: "field:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:G;".
#include "codegen/bpf/tracepoint_format.h"

#include <glob.h>

#include <fstream>
#include <regex>

namespace gpubt::codegen::bpf {

std::optional<TracepointField> read_tracepoint_field(const std::string &category,
                                                     const std::string &event,
                                                     const std::string &field) {
  for (const char *root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    std::string path = std::string(root) + "/events/" + category + "/" + event + "/format";
    glob_t g{};
    if (glob(path.c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0)
      path = g.gl_pathv[0];
    globfree(&g);
    std::ifstream in(path);
    if (!in)
      continue;
    static const std::regex re(
        R"(field:(.*[^\w])(\w+)(\[\w*\])?;\s*offset:(\d+);\s*size:(\d+);\s*signed:(\d+);)");
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, re) || m[2] != field)
        continue;
      TracepointField f;
      f.offset = std::stoul(m[4]);
      f.size = std::stoul(m[5]);
      f.is_signed = m[6] == "1";
      std::string type = m[1];
      f.data_loc = type.find("__data_loc") != std::string::npos;
      f.char_array = m[3].matched && type.find("char") != std::string::npos;
      static const std::regex record(R"(\b(struct|union)\s+(\w+)\s*\*\s*$)");
      std::smatch r;
      if (!m[3].matched && std::regex_search(type, r, record))
        f.record = r[1].str() + " " + r[2].str();
      return f;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

frontend::Type tracepoint_field_type(const TracepointField &f) {
  if (f.char_array)
    return frontend::Type::string(f.size);
  if (f.data_loc)
    return frontend::Type::string(64);
  if (!f.record.empty()) {
    frontend::Type stub; // completed from the C types when dereferenced
    stub.kind = frontend::TypeKind::Record;
    stub.enum_name = f.record;
    return frontend::Type::pointer(std::move(stub));
  }
  uint32_t size = f.size == 1 || f.size == 2 || f.size == 4 ? f.size : 8;
  return frontend::Type::integer(size, f.is_signed);
}

std::optional<frontend::Type> tracepoint_arg_type(const frontend::AttachPoint &ap,
                                                  std::string_view field) {
  if (ap.provider != frontend::Provider::Tracepoint)
    return std::nullopt;
  auto f = read_tracepoint_field(ap.target, ap.func, std::string(field));
  if (!f)
    return std::nullopt;
  return tracepoint_field_type(*f);
}

} // namespace gpubt::codegen::bpf
