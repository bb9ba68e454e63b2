// The --metrics HTTP server: GET /metrics answers with the text the renderer makes, / with a
// pointer to it, anything else 404 (405 for other methods).
#include "runtime/output/metrics_endpoint.h"

#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace gpubt::runtime {

namespace {

constexpr size_t kMaxRequest = 16384; // a scrape's request is a few hundred bytes
// From accept to the last byte of the answer (Prometheus' default scrape timeout).
constexpr auto kDeadline = std::chrono::seconds(10);
// Connections served at once; one more closes the oldest.
constexpr size_t kMaxClients = 32;

std::string response(const char *status, const char *type, const std::string &body, bool head) {
  return std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
         (head ? "" : body);
}

} // namespace

bool split_host_port(const std::string &address, std::string &host, std::string &port) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos)
    return false;
  host = address.substr(0, colon);
  port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string::npos) // an IPv6 address needs its brackets
    return false;
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != port.npos ||
      std::stoi(port) > 65535)
    return false;
  return true;
}

Result<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::listen_on(const std::string &address) {
  std::string host, port;
  if (!split_host_port(address, host, port))
    return make_error("--metrics takes ADDR:PORT (127.0.0.1:9464, [::1]:9464 or :9464 for every "
                      "address), not '" +
                      address + "'");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo *found = nullptr;
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found))
    return make_error("--metrics " + address + ": " + gai_strerror(rc));
  std::string why = "no address";
  UniqueFd fd;
  // With no host, getaddrinfo lists 0.0.0.0 before ::, and :: would also take IPv4 on most
  // systems: the first that binds is the one.
  for (addrinfo *a = found; a && !fd.valid(); a = a->ai_next) {
    UniqueFd s(socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol));
    int one = 1;
    setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (s.valid() && bind(s.get(), a->ai_addr, a->ai_addrlen) == 0 && listen(s.get(), 16) == 0)
      fd = std::move(s);
    else
      why = std::strerror(errno);
  }
  freeaddrinfo(found);
  if (!fd.valid())
    return make_error("--metrics " + address + ": cannot listen: " + why);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(fd.get(), reinterpret_cast<sockaddr *>(&bound), &len);
  int bound_port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port
                                        : reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
  UniqueFd wake(eventfd(0, EFD_CLOEXEC));
  return std::unique_ptr<MetricsEndpoint>(
      new MetricsEndpoint(std::move(fd), std::move(wake), bound_port));
}

struct MetricsEndpoint::Client {
  UniqueFd fd;
  std::chrono::steady_clock::time_point deadline;
  std::string request, answer;
  size_t sent = 0;
  bool answering = false;
};

MetricsEndpoint::MetricsEndpoint(UniqueFd listener, UniqueFd wake, int port)
    : listener_(std::move(listener)), wake_(std::move(wake)), port_(port) {}

MetricsEndpoint::~MetricsEndpoint() {
  uint64_t one = 1;
  if (write(wake_.get(), &one, sizeof one) < 0) {
    // The eventfd cannot be full after one write; nothing to recover.
  }
  if (thread_.joinable())
    thread_.join();
}

void MetricsEndpoint::serve(std::function<std::string()> render,
                            std::chrono::milliseconds render_every) {
  render_ = std::move(render);
  render_every_ = render_every;
  thread_ = std::thread([this] { loop(); });
}

void MetricsEndpoint::loop() {
  // Ctrl-C and SIGTERM must interrupt the session's epoll_wait on the main thread, not land here.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  std::vector<Client> clients; // oldest first
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    std::erase_if(clients, [&](const Client &c) { return c.deadline <= now; });
    int timeout = -1;
    for (const auto &c : clients) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(c.deadline - now).count();
      timeout = timeout < 0 ? int(left) : std::min(timeout, int(left));
    }
    std::vector<pollfd> p = {{wake_.get(), POLLIN, 0}, {listener_.get(), POLLIN, 0}};
    for (const auto &c : clients)
      p.push_back({c.fd.get(), short(c.answering ? POLLOUT : POLLIN), 0});
    if (poll(p.data(), p.size(), timeout) < 0 && errno != EINTR)
      return;
    if (p[0].revents)
      return; // the clients' sockets close with them, whatever they were doing
    for (size_t i = 0; i < clients.size(); ++i) {
      Client &c = clients[i];
      if (!p[i + 2].revents)
        continue;
      bool more = c.answering ? true : read_request(c);
      while (more && c.answering && c.sent < c.answer.size()) {
        ssize_t n = send(c.fd.get(), c.answer.data() + c.sent, c.answer.size() - c.sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
          c.sent += size_t(n);
        else if (n < 0 && errno == EINTR)
          continue;
        else
          more = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        if (n <= 0)
          break;
      }
      if (!more || (c.answering && c.sent == c.answer.size()))
        c.fd.reset(); // done, or the client went away
    }
    std::erase_if(clients, [](const Client &c) { return !c.fd.valid(); });
    if (!(p[1].revents & POLLIN))
      continue;
    for (;;) {
      UniqueFd fd = accept_.accept(listener_.get(), SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (!fd.valid())
        break;
      if (clients.size() == kMaxClients)
        clients.erase(clients.begin());
      clients.push_back({std::move(fd), std::chrono::steady_clock::now() + kDeadline, {}, {}, 0,
                         false});
    }
  }
}

const std::string &MetricsEndpoint::rendered() {
  auto now = std::chrono::steady_clock::now();
  if (!has_text_ || now - rendered_at_ >= render_every_) {
    text_ = render_();
    rendered_at_ = std::chrono::steady_clock::now(); // after it: a slow one is not redone at once
    has_text_ = true;
  }
  return text_;
}

bool MetricsEndpoint::read_request(Client &c) {
  char buf[4096];
  while (c.request.find("\r\n\r\n") == std::string::npos && c.request.size() < kMaxRequest) {
    ssize_t n = recv(c.fd.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return true; // the rest comes later, or the deadline ends it
    if (n <= 0)
      return false;
    c.request.append(buf, size_t(n));
  }
  const std::string &request = c.request;
  c.answering = true;
  // "GET /metrics?x HTTP/1.1": the method, then the path up to its query.
  size_t sp1 = request.find(' '), sp2 = request.find(' ', sp1 + 1);
  if (sp1 == std::string::npos || sp2 == std::string::npos) {
    c.answer = response("400 Bad Request", "text/plain", "bad request\n", false);
    return true;
  }
  std::string method = request.substr(0, sp1);
  std::string path = request.substr(sp1 + 1, sp2 - sp1 - 1);
  path = path.substr(0, path.find('?'));
  bool head = method == "HEAD";
  if (method != "GET" && !head)
    c.answer = response("405 Method Not Allowed", "text/plain", "GET only\n", false);
  else if (path == "/metrics")
    c.answer = response("200 OK", "text/plain; version=0.0.4; charset=utf-8", rendered(), head);
  else if (path == "/")
    c.answer = response("200 OK", "text/plain", "gpubt: metrics at /metrics\n", head);
  else
    c.answer = response("404 Not Found", "text/plain", "not found\n", head);
  return true;
}

} // namespace gpubt::runtime
