// Parses tracefs format files: "field:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:G;".
#include "codegen/bpf/tracepoint_format.h"

#include <glob.h>

#include <fstream>
#include <regex>
#include <utility>
#include <vector>

#include "frontend/nearest_name.h"

namespace gpubt::codegen::bpf {

namespace {

// Every field of the first tracepoint CATEGORY:EVENT (wildcards allowed) matches, in the order
// of its format file; nullopt when there is no such format file.
struct TracepointFormat {
  std::string category, event; // the tracepoint read
  std::vector<std::pair<std::string, TracepointField>> fields;
};

std::optional<TracepointFormat> read_tracepoint_format(const std::string &category,
                                                       const std::string &event) {
  for (const char *root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    std::string path = std::string(root) + "/events/" + category + "/" + event + "/format";
    glob_t g{};
    if (glob(path.c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0)
      path = g.gl_pathv[0];
    globfree(&g);
    std::ifstream in(path);
    if (!in)
      continue;
    TracepointFormat format;
    size_t end = path.rfind('/'), mid = path.rfind('/', end - 1), start = path.rfind('/', mid - 1);
    format.category = path.substr(start + 1, mid - start - 1);
    format.event = path.substr(mid + 1, end - mid - 1);
    static const std::regex re(
        R"(field:(.*[^\w])(\w+)(\[\w*\])?;\s*offset:(\d+);\s*size:(\d+);\s*signed:(\d+);)");
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, re))
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
      format.fields.emplace_back(m[2], f);
    }
    return format;
  }
  return std::nullopt;
}

} // namespace

std::optional<TracepointField> read_tracepoint_field(const std::string &category,
                                                     const std::string &event,
                                                     const std::string &field) {
  if (auto format = read_tracepoint_format(category, event))
    for (const auto &[name, f] : format->fields)
      if (name == field)
        return f;
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

std::string tracepoint_arg_error(const frontend::AttachPoint &ap, std::string_view field) {
  if (ap.provider != frontend::Provider::Tracepoint)
    return "";
  auto format = read_tracepoint_format(ap.target, ap.func);
  if (!format)
    return "";
  std::vector<std::string> names;
  for (const auto &[name, f] : format->fields)
    if (name == field)
      return "";
    else if (name.rfind("common_", 0) != 0)
      names.push_back(name);
  std::string message = "Struct/union of type 'struct _tracepoint_" + format->category + "_" +
                        format->event + "' does not contain a field named '" +
                        std::string(field) + "'";
  return message + frontend::did_you_mean(std::string(field), names);
}

} // namespace gpubt::codegen::bpf
