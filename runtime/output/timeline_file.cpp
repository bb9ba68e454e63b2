// --timeline's segments and the file put in place from them (see timeline_file.h).
#include "runtime/output/timeline_file.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpubt::runtime {
namespace {

// Each event is stored as ",\n{...}": a newline starts every event and none is inside one.
constexpr std::string_view kSeparator = ",\n";
constexpr size_t kBufferSize = size_t(1) << 16;

std::string folder_of(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string name_of(const std::string &path) { return path.substr(path.rfind('/') + 1); }

// The folder FD is open on, as a path that leads there whatever its names are now.
std::string fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

const char *kind_of(mode_t mode) {
  switch (mode & S_IFMT) {
  case S_IFDIR:
    return "a directory";
  case S_IFLNK:
    return "a symbolic link";
  case S_IFCHR:
    return "a character device";
  case S_IFBLK:
    return "a block device";
  case S_IFIFO:
    return "a FIFO";
  case S_IFSOCK:
    return "a socket";
  default:
    return "not a regular file";
  }
}

Error cannot_write(const std::string &path, int err) {
  return make_error("--timeline: cannot write " + path + ": " + std::strerror(err));
}

// A file no name points at, in FOLDER (so on FILE's file system): O_TMPFILE, or where the file
// system has none a private name removed at once.
Result<UniqueFd> anonymous_file(const std::string &folder) {
  int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0)
    return UniqueFd(fd);
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
    return Error{std::strerror(errno)};
  std::string name = folder + "/.gpubt-timeline-XXXXXX";
  fd = mkostemp(name.data(), O_CLOEXEC); // O_CREAT | O_EXCL: never an existing name or link
  if (fd < 0)
    return Error{std::strerror(errno)};
  unlink(name.c_str());
  return UniqueFd(fd);
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = ENOSPC;
      return false;
    }
    bytes.remove_prefix(size_t(n));
  }
  return true;
}

// Buffered writes into the new file; the first failure is kept.
struct Writer {
  int fd;
  std::string buf;
  int err = 0;
  void put(std::string_view s) {
    buf.append(s);
    if (buf.size() >= kBufferSize)
      flush();
  }
  void flush() {
    if (!err && !write_all(fd, buf))
      err = errno;
    buf.clear();
  }
};

} // namespace

Result<std::unique_ptr<TimelineFile>> TimelineFile::open(const std::string &path, Limits limits) {
  std::string name = name_of(path);
  if (name.empty() || name == "." || name == "..")
    return make_error("--timeline: " + path + " names a folder: name a file in it");
  UniqueFd folder(::open(folder_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!folder.valid())
    return cannot_write(path, errno);
  struct stat st {};
  if (fstatat(folder.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
    return make_error("--timeline: " + path + " is " + kind_of(st.st_mode) +
                      "; gpubt writes a new file and renames it over FILE, which would replace "
                      "it: name a regular file");
  Segment seg[2];
  for (auto &s : seg) {
    auto fd = anonymous_file(fd_path(folder.get()));
    if (!fd)
      return make_error("--timeline: cannot write " + path + ": " + fd.error());
    s.fd = std::move(*fd);
  }
  mode_t mask = umask(0); // read, then put back (gpubt's threads are not started yet)
  umask(mask);
  return std::unique_ptr<TimelineFile>(new TimelineFile(
      path, std::move(folder), limits, std::move(seg[0]), std::move(seg[1]), 0666 & ~mask));
}

TimelineFile::TimelineFile(std::string path, UniqueFd folder, Limits limits, Segment a,
                           Segment b, unsigned mode)
    : path_(std::move(path)), folder_(std::move(folder)), name_(name_of(path_)), limits_(limits),
      mode_(mode) {
  seg_[0] = std::move(a);
  seg_[1] = std::move(b);
}

std::string TimelineFile::in_folder(const std::string &name) const {
  return fd_path(folder_.get()) + "/" + name;
}

TimelineFile::~TimelineFile() = default;

bool TimelineFile::flush_buffer() {
  if (!write_errno_ && !write_all(seg_[current_].fd.get(), buffer_))
    write_errno_ = errno;
  buffer_.clear();
  return !write_errno_;
}

// The current segment is full: the older one's events go, and it takes the new ones.
void TimelineFile::rotate() {
  flush_buffer();
  current_ = 1 - current_;
  Segment &s = seg_[current_];
  discarded_ += s.events;
  s.events = s.bytes = 0;
  if (!write_errno_ && (ftruncate(s.fd.get(), 0) != 0 || lseek(s.fd.get(), 0, SEEK_SET) != 0))
    write_errno_ = errno;
}

void TimelineFile::append(std::string_view event) {
  ++appended_;
  size_t size = kSeparator.size() + event.size();
  if (size > limits_.max_bytes || limits_.max_events == 0) {
    ++discarded_; // larger than the whole file may be
    return;
  }
  Segment &cur = seg_[current_];
  if (cur.events >= limits_.max_events || cur.bytes + size > limits_.max_bytes)
    rotate();
  Segment &s = seg_[current_];
  buffer_.append(kSeparator).append(event);
  s.events++;
  s.bytes += size;
  if (buffer_.size() >= kBufferSize)
    flush_buffer();
}

// The newest events of both segments within the limits: all of the current one, and the older
// one's from its first event past both the events and the bytes the current one leaves room for.
Result<TimelineFile::Cut> TimelineFile::older_cut() const {
  const Segment &older = seg_[1 - current_], &newer = seg_[current_];
  uint64_t skip_events =
      older.events + newer.events > limits_.max_events ? older.events + newer.events - limits_.max_events : 0;
  uint64_t skip_bytes =
      older.bytes + newer.bytes > limits_.max_bytes ? older.bytes + newer.bytes - limits_.max_bytes : 0;
  Cut all{older.bytes, older.events};
  if (skip_events == 0 && skip_bytes == 0)
    return Cut{};
  if (skip_events >= older.events)
    return all;
  std::string buf(size_t(1) << 20, '\0');
  uint64_t index = 0; // of the event the next newline starts
  for (uint64_t at = 0; at < older.bytes;) {
    ssize_t n = pread(older.fd.get(), buf.data(), buf.size(), off_t(at));
    if (n <= 0)
      return Error{std::strerror(n < 0 ? errno : EIO)};
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[size_t(i)] != '\n')
        continue;
      uint64_t start = at + uint64_t(i) - 1; // the event's ","
      if (index >= skip_events && start >= skip_bytes)
        return Cut{start, index};
      ++index;
    }
    at += uint64_t(n);
  }
  return all;
}

Status TimelineFile::put_in_place(const std::vector<std::string> &first,
                                  const std::vector<std::string> &last,
                                  const std::function<std::string(uint64_t)> &trailer) {
  flush_buffer();
  if (write_errno_)
    return cannot_write(path_, write_errno_);
  auto cut = older_cut();
  if (!cut)
    return make_error("--timeline: cannot read back the trace: " + cut.error());
  uint64_t dropped = discarded_ + cut->events;

  std::string tmp = in_folder(name_ + ".XXXXXX.tmp");
  UniqueFd fd(mkostemps(tmp.data(), 4, O_CLOEXEC)); // O_CREAT | O_EXCL, mode 0600
  if (!fd.valid())
    return cannot_write(path_, errno);
  Writer w{fd.get()};
  bool none_yet = true;
  auto event = [&](std::string_view e) {
    if (!none_yet)
      w.put(kSeparator);
    w.put(e);
    none_yet = false;
  };
  // A segment's bytes from OFFSET: its events, each after a separator (left out before the first).
  auto segment = [&](const Segment &s, uint64_t offset) {
    w.flush();
    std::string buf(size_t(1) << 20, '\0');
    for (uint64_t at = offset; at < s.bytes && !w.err;) {
      ssize_t n = pread(s.fd.get(), buf.data(), std::min<uint64_t>(buf.size(), s.bytes - at),
                        off_t(at));
      if (n <= 0) {
        w.err = n < 0 ? errno : EIO;
        break;
      }
      std::string_view chunk(buf.data(), size_t(n));
      if (none_yet && at == offset)
        chunk.remove_prefix(kSeparator.size());
      if (!write_all(w.fd, chunk))
        w.err = errno;
      at += uint64_t(n);
    }
    none_yet = none_yet && offset >= s.bytes;
  };
  w.put("{\"traceEvents\":[\n");
  for (const auto &e : first)
    event(e);
  segment(seg_[1 - current_], cut->offset);
  segment(seg_[current_], 0);
  for (const auto &e : last)
    event(e);
  w.put("\n],");
  w.put(trailer(dropped));
  w.put("}\n");
  w.flush();
  if (!w.err && fchmod(fd.get(), mode_) != 0)
    w.err = errno;
  if (!w.err && close(fd.release()) != 0)
    w.err = errno;
  if (!w.err && std::rename(tmp.c_str(), in_folder(name_).c_str()) != 0)
    w.err = errno;
  if (w.err) {
    unlink(tmp.c_str());
    return cannot_write(path_, w.err);
  }
  return Ok{};
}

} // namespace gpubt::runtime
