// A scrape: every host map read now and printed through the Prometheus output, then health.
#include "driver/trace_metrics.h"

#include <csignal>
#include <sstream>

#include "runtime/output/print_map.h"
#include "runtime/output/prometheus_output.h"

namespace gpubt::driver {

bool listen_for_metrics(const Options &options, std::unique_ptr<runtime::MetricsEndpoint> &into,
                        std::ostream &err) {
  if (options.metrics_address.empty())
    return true;
  auto endpoint = runtime::MetricsEndpoint::listen_on(options.metrics_address);
  if (!endpoint) {
    err << "ERROR: " << endpoint.error() << "\n";
    return false;
  }
  into = std::move(*endpoint);
  if (!options.bt.quiet) {
    std::string host, port;
    runtime::split_host_port(options.metrics_address, host, port);
    err << "gpubt: serving metrics at http://" << (host.empty() ? "0.0.0.0" : host) << ":"
        << into->port() << "/metrics"
        << (host.empty() ? " (every address: anyone who can reach the port reads the maps)" : "")
        << "\n";
  }
  return true;
}

void serve_metrics(runtime::MetricsEndpoint &endpoint, const abi::ProgramSpec &spec,
                   const runtime::Session *s, const Options &options, uint64_t attached) {
  // Its own symbolizer: the printers' is used on the main thread.
  runtime::Symbolizer symbolize = s ? s->symbolizer() : nullptr;
  endpoint.serve([&spec, s, &options, attached, symbolize] {
    std::vector<runtime::MapData> maps(spec.maps.size());
    for (size_t i = 0; s && i < spec.maps.size(); ++i)
      if (!spec.maps[i].internal)
        maps[i] = s->read_map(static_cast<int>(i));
    std::ostringstream text;
    auto out = runtime::make_prometheus_output(text, {options.metrics_series});
    if (s) // the probe names as late attaches (a library loaded since) made them
      runtime::print_all_maps(*out, s->spec_snapshot(), maps, symbolize);
    out->attached_probes(attached);
    out->lost_events(s ? s->lost_events() : 0);
    int pid = s ? s->target_pid() : -1;
    out->attached_processes(pid > 0 && kill(pid, 0) == 0 ? 1 : 0);
    out->flush();
    return text.str();
  });
}

} // namespace gpubt::driver
