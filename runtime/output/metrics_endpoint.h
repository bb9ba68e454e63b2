// --metrics: a minimal HTTP/1.1 server on its own thread that answers GET /metrics with the
// exposition text, then closes the connection. The text is made at most once a second and
// shared by every request meanwhile, so that a storm of scrapes (anyone who reaches the port)
// costs the traced host one render a second, not one per request. One poll loop serves many
// connections at once, each with a deadline counted from its accept, so an idle or slow client
// holds nothing up, and accept cannot spin at the open-file limit (accept_reserve.h); no
// library, so the runtime gains no dependency.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "runtime/abi/accept_reserve.h"
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

  // Starts the thread; RENDER runs on it for GET /metrics (at most once every RENDER_EVERY, the
  // text reused meanwhile) and returns the exposition text.
  void serve(std::function<std::string()> render,
             std::chrono::milliseconds render_every = std::chrono::seconds(1));
  int port() const { return port_; }

private:
  MetricsEndpoint(UniqueFd listener, UniqueFd wake, int port);
  struct Client;
  void loop();
  // Reads what came; once the request is whole, makes the answer. False: the client is done.
  bool read_request(Client &c);
  const std::string &rendered(); // the text, made again when older than render_every_

  UniqueFd listener_, wake_; // wake_: an eventfd the destructor writes to end loop()'s poll
  int port_;
  std::function<std::string()> render_;
  std::chrono::milliseconds render_every_{0};
  std::string text_;
  std::chrono::steady_clock::time_point rendered_at_;
  bool has_text_ = false;
  AcceptReserve accept_;
  std::thread thread_;
};

// "ADDR:PORT" as host and port ("" host: every address); false when it is not of that shape.
bool split_host_port(const std::string &address, std::string &host, std::string &port);

} // namespace gpubt::runtime
