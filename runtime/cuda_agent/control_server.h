// The dormant agent's control socket (runtime/abi/agent_control.h): one thread that accepts
// gpubt, checks who it is (root or this process's user), and runs one attach session at a time;
// a second gpubt meanwhile is refused, saying which one is attached. Needs no CUDA: the agent
// gives it what attaching and detaching do.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/abi/accept_reserve.h"
#include "runtime/abi/agent_control.h"
#include "runtime/abi/agent_folders.h"
#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"

namespace gpubt::agent {

class ControlServer {
public:
  struct Handler {
    // Attach's blobs (config text, cubins) and fds (owned by it now). Returns what to tell gpubt
    // (Attached) or an error (Refused).
    std::function<Result<std::string>(std::vector<std::string> blobs, std::vector<int> fds)> attach;
    // Undoes the attach; returns write_agent_results' bytes (sent unless gpubt is gone).
    std::function<std::string()> detach;
  };
  // Listens on <folder>/<pid>.sock, the folder abi::choose_agent_dir picks from ROOTS (a
  // folder another user made first is passed over for one of this user's own).
  static Result<std::unique_ptr<ControlServer>> start(Handler handler,
                                                      const abi::AgentFolderRoots &roots = {});
  ~ControlServer();

  const std::string &path() const { return path_; }
  // Printf records for the attached gpubt; false when none is attached or it is gone.
  bool send_events(const std::string &records);
  bool send_log(const std::string &line); // a -v line for the attached gpubt
  // The process ends attached: RESULTS go to gpubt now and the socket is removed.
  void finish(const std::string &results);

private:
  ControlServer() = default;
  void loop();
  bool send(abi::Frame type, const std::string &bytes);
  void serve(runtime::UniqueFd conn, pid_t peer);
  std::string refusal(uid_t uid) const;
  Handler handler_;
  std::string path_;
  runtime::UniqueFd listen_, wake_read_, wake_write_;
  runtime::AcceptReserve accept_; // accept cannot spin at the open-file limit
  std::mutex send_mu_;
  int session_ = -1; // the attached gpubt's socket (under send_mu_)
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

} // namespace gpubt::agent
