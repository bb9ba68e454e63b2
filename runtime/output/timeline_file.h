// --timeline's file on disk. Events stream as they come into two anonymous segment files in the
// trace file's folder (the newest kept within the limits, as a ring of two halves), so gpubt's
// memory does not grow with the trace; at the end they are copied into a private temporary
// (O_EXCL, never a name another user can plant) that is renamed over FILE. Nothing is
// truncated or followed: FILE must be a regular file or not exist (a directory, device, FIFO,
// socket or symlink is refused before tracing starts).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"

namespace gpubt::runtime {

class TimelineFile {
public:
  struct Limits {
    size_t max_events = 1000000;
    size_t max_bytes = size_t(256) << 20; // of events, in the file
  };
  // Checks PATH and opens the segments; an error names what is wrong with PATH.
  static Result<std::unique_ptr<TimelineFile>> open(const std::string &path, Limits limits);
  ~TimelineFile();

  // One event: a JSON object on one line (its strings escaped: no raw newline).
  void append(std::string_view event);

  // Writes {"traceEvents":[ FIRST, the kept events oldest first, LAST ], then the members
  // TRAILER(events left out) makes} into a private temporary beside PATH and renames it over
  // PATH. On failure nothing is left behind and PATH is as it was.
  Status put_in_place(const std::vector<std::string> &first, const std::vector<std::string> &last,
                      const std::function<std::string(uint64_t dropped)> &trailer);

private:
  struct Segment {
    UniqueFd fd;
    uint64_t events = 0, bytes = 0;
  };
  TimelineFile(std::string path, UniqueFd folder, Limits limits, Segment a, Segment b,
               unsigned mode);
  // FILE's name in its folder as opened at the start (/proc/self/fd/N/NAME): the folder is the
  // one checked then, whatever the path names by the end (another user may own a folder on it
  // and swap it for a link to somewhere else).
  std::string in_folder(const std::string &name) const;
  void rotate();
  bool flush_buffer();
  struct Cut {
    uint64_t offset = 0, events = 0; // where the older segment's kept events start
  };
  Result<Cut> older_cut() const;

  std::string path_;
  UniqueFd folder_;
  std::string name_; // FILE's last component
  Limits limits_;
  Segment seg_[2];
  int current_ = 0; // seg_[current_] takes new events; the other holds the older ones
  std::string buffer_; // of seg_[current_], not yet written
  uint64_t appended_ = 0, discarded_ = 0;
  int write_errno_ = 0; // the first failed write's
  unsigned mode_;       // the new file's permissions: 0666 less the umask
};

} // namespace gpubt::runtime
