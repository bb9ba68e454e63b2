// --metrics: a minimal HTTP/1.1 server on its own thread that answers GET /metrics with a text
// made afresh for each request (one Prometheus scrape), then closes the connection. One poll
// loop serves many connections at once, each with a deadline counted from its accept, so an
// idle or slow client holds nothing up; no library, so the runtime gains no dependency.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"

namespace gpubt::runtime {

class MetricsEndpoint {
public:
  // Listens on ADDR:PORT: "127.0.0.1:9464", "[::1]:9464", "node1:9464", or ":9464" for every
  // address. Nothing is answered before serve().
  static Result<std::unique_ptr<MetricsEndpoint>> listen_on(const std::string &address);
  ~MetricsEndpoint(); // stops the thread at once (a render in progress ends first); never waits
                      // on a client

  // Starts the thread; RENDER runs on it for each GET /metrics and returns the exposition text.
  void serve(std::function<std::string()> render);
  int port() const { return port_; }

private:
  MetricsEndpoint(UniqueFd listener, UniqueFd wake, int port);
  struct Client;
  void loop();
  // Reads what came; once the request is whole, makes the answer. False: the client is done.
  bool read_request(Client &c);

  UniqueFd listener_, wake_; // wake_: an eventfd the destructor writes to end loop()'s poll
  int port_;
  std::function<std::string()> render_;
  std::thread thread_;
};

// "ADDR:PORT" as host and port ("" host: every address); false when it is not of that shape.
bool split_host_port(const std::string &address, std::string &host, std::string &port);

} // namespace gpubt::runtime
