// --metrics while tracing: each scrape prints the tracer's snapshot() as it is at that moment
// through the Prometheus output, then health. gpu probes' maps are as the agents last sent them
// (every half second while --metrics is on: runtime/abi/live_maps.h); with gpu probes or gpu:hang,
// the age of each process's oldest running launch (running_launches.h).
#include "runtime/run/tracer.h"

#include <csignal>
#include <ctime>
#include <sstream>

#include "runtime/output/print_map.h"
#include "runtime/output/prometheus_output.h"

namespace gpubt::runtime {

// Before anything is traced, so that a bad address or a port in use is an error up front.
bool Tracer::listen_for_metrics() {
  if (options_.metrics_address.empty())
    return true;
  auto endpoint = MetricsEndpoint::listen_on(options_.metrics_address);
  if (!endpoint) {
    err_ << "ERROR: " << endpoint.error() << "\n";
    return false;
  }
  metrics_ = std::move(*endpoint);
  if (!options_.quiet) {
    std::string host, port;
    split_host_port(options_.metrics_address, host, port);
    err_ << "gpubt: serving metrics at http://" << (host.empty() ? "0.0.0.0" : host) << ":"
         << metrics_->port() << "/metrics"
         << (host.empty() ? " (every address: anyone who can reach the port reads the maps)" : "")
         << "\n";
  }
  return true;
}

// ATTACHED: the attached-probes count.
void Tracer::serve_metrics(uint64_t attached) {
  const Session *s = session_.get();
  // Its own symbolizer: the printer's is used on the main thread.
  Symbolizer symbolize = s ? s->symbolizer() : nullptr;
  metrics_->serve([this, s, attached, symbolize] {
    std::ostringstream text;
    auto out = make_prometheus_output(text, {options_.metrics_series});
    // The probe names as late attaches (a library loaded since) made them.
    runtime::print_all_maps(*out, s ? s->spec_snapshot() : spec_, snapshot(), symbolize);
    out->attached_probes(attached);
    out->lost_events(s ? s->lost_events() : 0);
    int pid = s ? s->target_pid() : -1;
    out->attached_processes(pid > 0 && kill(pid, 0) == 0 ? 1 : 0);
    if (watch_launches()) {
      timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      std::lock_guard<std::mutex> lock(maps_mu_);
      out->running_kernels(hang_.oldest(uint64_t(now.tv_sec) * 1'000'000'000 + now.tv_nsec));
    }
    out->flush();
    return text.str();
  });
}

} // namespace gpubt::runtime
