// --metrics while tracing: each scrape reads the session's host maps as they are at that moment.
// gpu probes' maps are not live: the agent hands them over when the traced program exits.
#pragma once
#include <cstdint>
#include <memory>
#include <ostream>

#include "driver/options.h"
#include "runtime/bpf/session.h"
#include "runtime/output/metrics_endpoint.h"

namespace gpubt::driver {

// Listens on --metrics' address before anything is traced, so that a bad address or a port in
// use is an error up front. False (and a message on ERR) when it cannot; INTO stays null when
// --metrics is not given.
bool listen_for_metrics(const Options &options, std::unique_ptr<runtime::MetricsEndpoint> &into,
                        std::ostream &err);

// Starts answering scrapes from S's maps (S null: a script of gpu probes only, whose maps are
// not live: health only); ATTACHED is the attached-probes count. The endpoint must be destroyed
// before S.
void serve_metrics(runtime::MetricsEndpoint &endpoint, const abi::ProgramSpec &spec,
                   const runtime::Session *s, const Options &options, uint64_t attached);

} // namespace gpubt::driver
