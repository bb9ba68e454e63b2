// The format-independent parts of output.h and the choice of format.
#include "runtime/output/output.h"

#include "runtime/output/json_output.h"
#include "runtime/output/text_output.h"

namespace gpubt::runtime {

std::string Message::joined() const {
  std::string out;
  for (const Piece &p : pieces)
    out += p.text;
  return out;
}

bool is_machine_readable(OutputFormat format) { return format != OutputFormat::Text; }

std::unique_ptr<Output> make_output(OutputFormat format, std::ostream &out,
                                    const OutputOptions &options) {
  switch (format) {
  case OutputFormat::Json:
    return make_json_output(out, JsonKeys::Joined);
  case OutputFormat::JsonKeys:
    return make_json_output(out, JsonKeys::Typed);
  case OutputFormat::Text:
    break;
  }
  return make_text_output(out, options);
}

} // namespace gpubt::runtime
