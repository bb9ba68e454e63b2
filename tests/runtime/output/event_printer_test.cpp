// The one event decoder: host ring-buffer events and the GPU agent's framed records give the
// same Output calls.
#include "runtime/output/event_printer.h"

#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

#include "runtime/abi/device_abi.h"
#include "tests/support/output_fixtures.h"

namespace gpubt::runtime {
namespace {

using namespace fx;

// printf("n=%d s=%s\n", n, s) with s a str(8); print(n); @m = count(); print(@m).
abi::ProgramSpec spec_with_events() {
  abi::ProgramSpec spec;
  spec.formats.push_back({"n=%d s=%s\n", {{int_t(), 0}, {str_t(8), 8}}});
  spec.formats.push_back({"", {{int_t(), 0}}});
  spec.maps.push_back(map_spec("@m", AggKind::Count, ValueType{}, uint_t()));
  return spec;
}

Bytes header(abi::EventKind kind, uint32_t index) { return cat({le(uint32_t(kind)), le(index)}); }

// A gpubt_ring_record frame around an event, padded to 8 bytes as the agent writes it.
Bytes record(const Bytes &event) {
  Bytes body = event;
  body.resize((sizeof(gpubt_ring_record) + body.size() + 7) / 8 * 8 - sizeof(gpubt_ring_record));
  uint32_t size = uint32_t(sizeof(gpubt_ring_record) + body.size());
  return cat({le(size), le(uint32_t(1)), body});
}

TEST(EventPrinter, HostEventsAndGpuRecordsDecodeAlike) {
  abi::ProgramSpec spec = spec_with_events();
  Bytes printf_payload = cat({i64(5), str("ab", 8)});
  Bytes value_payload = i64(-3);

  std::ostringstream host;
  auto host_out = make_output(OutputFormat::Text, host);
  EventPrinter host_printer(spec, *host_out, nullptr,
                            [](int) { return MapData{entry(scalar_key(), {u64(4)})}; });
  host_printer.print({uint32_t(abi::EventKind::Printf), 0}, printf_payload.data(),
                     printf_payload.size());
  host_printer.print({uint32_t(abi::EventKind::PrintValue), 1}, value_payload.data(),
                     value_payload.size());
  host_printer.print({uint32_t(abi::EventKind::PrintMap), 0}, nullptr, 0);
  host_printer.print({uint32_t(abi::EventKind::Exit), 0}, nullptr, 0);
  EXPECT_EQ(host.str(), "n=5 s=ab\n-3\n@m: 4\n");

  std::ostringstream gpu;
  auto gpu_out = make_output(OutputFormat::Text, gpu);
  EventPrinter gpu_printer(spec, *gpu_out, nullptr);
  // A record of a kind no gpu probe makes (here PrintValue) is not printed: the records come
  // from the traced process, which may be another user's.
  Bytes bytes = cat({record(cat({header(abi::EventKind::Printf, 0), printf_payload})),
                     record(cat({header(abi::EventKind::PrintValue, 1), value_payload})),
                     record(cat({header(abi::EventKind::Printf, 0), printf_payload}))});
  Bytes partial = record(cat({header(abi::EventKind::Printf, 0), printf_payload}));
  partial.resize(partial.size() - 8); // the rest has not come yet
  bytes.insert(bytes.end(), partial.begin(), partial.end());
  gpu_printer.print_ring_records(bytes);
  EXPECT_EQ(gpu.str(), "n=5 s=ab\nn=5 s=ab\n");
  EXPECT_EQ(bytes, partial);
}

// print(@x, 1, 2); join(argv, ","); a -k failure; printf("%r|%rx|%rh\n", buf("a\n", 2) x3).
TEST(EventPrinter, PrintOptionsJoinHelperErrorsAndBuffers) {
  abi::ProgramSpec spec;
  spec.maps.push_back(map_spec("@x", AggKind::None, int_t(), int_t()));
  spec.joins.push_back({",", 3, 8});
  spec.helper_errors.push_back({"map_delete_elem", 1, 22});
  ValueType buf{ValueType::Buffer, 3};
  spec.formats.push_back({"%r|%rx|%rh\n", {{buf, 0}, {buf, 8}, {buf, 16}}});
  auto text = [&](OutputFormat format) {
    std::ostringstream out;
    auto o = make_output(format, out);
    EventPrinter printer(spec, *o, nullptr, [](int) {
      return MapData{entry(i64(1), {i64(10)}), entry(i64(2), {i64(30)})};
    });
    Bytes top_div = cat({u64(1), u64(2)});
    printer.print({uint32_t(abi::EventKind::PrintMap), 0}, top_div.data(), top_div.size());
    Bytes argv = cat({str("ls", 8), str("-l", 8), str("", 8)});
    printer.print({uint32_t(abi::EventKind::Join), 0}, argv.data(), argv.size());
    Bytes rc = i64(-2);
    printer.print({uint32_t(abi::EventKind::HelperError), 0}, rc.data(), rc.size());
    Bytes b = cat({Bytes{2, 'a', '\n'}, Bytes(5, 0), Bytes{2, 'a', '\n'}, Bytes(5, 0),
                   Bytes{2, 'a', '\n'}, Bytes(5, 0)});
    printer.print({uint32_t(abi::EventKind::Printf), 0}, b.data(), b.size());
    return out.str();
  };
  EXPECT_EQ(text(OutputFormat::Text),
            "@x[2]: 15\nls,-l\nWARNING: Failed to map_delete_elem: No such file or directory "
            "(-2)\na\\x0a|\\x61\\x0a|61 0a\n");
  EXPECT_EQ(text(OutputFormat::Json),
            "{\"type\": \"map\", \"data\": {\"@x\": {\"2\": 15}}}\n"
            "{\"type\": \"join\", \"data\": \"ls,-l\"}\n"
            "{\"type\": \"helper_error\", \"helper\": \"map_delete_elem\", \"retcode\": -2, "
            "\"line\": 1, \"col\": 22}\n"
            "{\"type\": \"printf\", \"data\": \"a\\\\x0a|\\\\x61\\\\x0a|61 0a\\n\"}\n");
}

TEST(EventPrinter, OutOfRangeIndexesPrintNothing) {
  abi::ProgramSpec spec = spec_with_events();
  std::ostringstream text;
  auto out = make_output(OutputFormat::Json, text);
  EventPrinter printer(spec, *out, nullptr);
  Bytes payload = i64(1);
  printer.print({uint32_t(abi::EventKind::Printf), 9}, payload.data(), payload.size());
  printer.print({uint32_t(abi::EventKind::PrintValue), 1}, payload.data(), 4); // cut short
  printer.print({uint32_t(abi::EventKind::PrintMap), 0}, nullptr, 0);          // no reader
  printer.print({uint32_t(abi::EventKind::Time), 3}, nullptr, 0);
  EXPECT_EQ(text.str(), "");
}

// system("echo %s", s) and cat("%s", path): the command runs and the file is read as the event
// is printed, after what printed before it; JSON names them "syscall" and "cat" as bpftrace does.
TEST(EventPrinter, SystemRunsAndCatReadsInEventOrder) {
  std::string path = ::testing::TempDir() + "event_printer_cat.txt";
  std::ofstream(path) << "0123456789";
  abi::ProgramSpec spec;
  spec.formats.push_back({"echo %s", {{str_t(8), 0}}});
  spec.formats.push_back({"%s", {{str_t(128), 0}}});
  spec.formats.push_back({"before\n", {}});
  Bytes word = str("hi", 8), file = str(path, 128), missing = str(path + ".none", 128);
  auto events = [&](EventPrinter &p) {
    p.print({uint32_t(abi::EventKind::Printf), 2}, nullptr, 0);
    p.print({uint32_t(abi::EventKind::System), 0}, word.data(), word.size());
    p.print({uint32_t(abi::EventKind::Cat), 1}, file.data(), file.size());
    p.print({uint32_t(abi::EventKind::Cat), 1}, missing.data(), missing.size());
  };

  std::ostringstream text, errors;
  auto text_out = make_output(OutputFormat::Text, text);
  EventPrinter text_printer(spec, *text_out, nullptr, nullptr, {true, 4, &errors});
  events(text_printer);
  EXPECT_EQ(text.str(), "before\nhi\n0123");
  EXPECT_EQ(errors.str(), "ERROR: failed to open file '" + path +
                              ".none': No such file or directory\n");

  std::ostringstream json;
  auto json_out = make_output(OutputFormat::Json, json);
  EventPrinter json_printer(spec, *json_out, nullptr, nullptr, {true, 4, nullptr});
  events(json_printer);
  EXPECT_EQ(json.str(), "{\"type\": \"printf\", \"data\": \"before\\n\"}\n"
                        "{\"type\": \"syscall\", \"data\": \"hi\\n\"}\n"
                        "{\"type\": \"cat\", \"data\": \"0123\"}\n");

  std::ostringstream off; // a printer without user actions (the GPU's) runs nothing
  auto off_out = make_output(OutputFormat::Text, off);
  EventPrinter off_printer(spec, *off_out, nullptr);
  off_printer.print({uint32_t(abi::EventKind::System), 0}, word.data(), word.size());
  off_printer.print({uint32_t(abi::EventKind::Cat), 1}, file.data(), file.size());
  EXPECT_EQ(off.str(), "");
  std::remove(path.c_str());
}

} // namespace
} // namespace gpubt::runtime
