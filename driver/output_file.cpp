// An ostream over a file descriptor that remembers the first failed write's errno (std::ofstream
// only sets badbit, and only once its buffer fills).
#include "driver/output_file.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <streambuf>
#include <sys/stat.h>
#include <unistd.h>

namespace gpubt::driver {
namespace {

// Writes leave the buffer in whole lines, at most PIPE_BUF bytes each where lines allow: the
// traced -c program writes to the same stdout, and its lines must land between gpubt's, not
// inside one (gpubt prints gpu printfs while the program runs).
class FdBuf : public std::streambuf {
public:
  explicit FdBuf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }
  int failed_errno() const { return errno_; }

protected:
  int_type overflow(int_type c) override {
    const char *end = pptr();
    while (end > pbase() && end[-1] != '\n')
      --end;
    if (end == pbase()) { // one line longer than the buffer: out as it is
      if (sync() != 0)
        return traits_type::eof();
    } else {
      if (!write_lines(pbase(), end))
        return traits_type::eof();
      size_t tail = pptr() - end;
      std::memmove(buf_, end, tail);
      setp(buf_, buf_ + sizeof buf_);
      pbump(static_cast<int>(tail));
    }
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override {
    bool ok = write_lines(pbase(), pptr());
    setp(buf_, buf_ + sizeof buf_); // on failure dropped: the trace is ended by the caller
    return ok ? 0 : -1;
  }

private:
  bool write_lines(const char *p, const char *end) {
    while (p < end) {
      const char *stop = end - p > PIPE_BUF ? p + PIPE_BUF : end;
      if (stop < end)
        for (const char *nl = stop; nl > p; --nl)
          if (nl[-1] == '\n') {
            stop = nl;
            break;
          }
      if (!write_all(p, stop))
        return false;
      p = stop;
    }
    return true;
  }
  bool write_all(const char *p, const char *end) {
    while (p < end) {
      ssize_t n = ::write(fd_, p, end - p);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        if (!errno_)
          errno_ = n < 0 ? errno : EIO;
        return false;
      }
      p += n;
    }
    return true;
  }

private:
  int fd_;
  int errno_ = 0;
  char buf_[8192];
};

class FdOutput : public OutputFile {
public:
  FdOutput(int fd, std::string name, bool owned)
      : fd_(fd), owned_(owned), name_(std::move(name)), buf_(fd), stream_(&buf_) {}
  ~FdOutput() override {
    stream_.flush();
    if (owned_)
      ::close(fd_);
  }
  std::ostream &stream() override { return stream_; }
  std::optional<std::string> write_error() override {
    stream_.flush();
    if (!buf_.failed_errno())
      return std::nullopt;
    return "failed to write " + name_ + ": " + std::strerror(buf_.failed_errno());
  }

private:
  int fd_;
  bool owned_;
  std::string name_;
  FdBuf buf_;
  std::ostream stream_;
};

} // namespace

Result<std::unique_ptr<OutputFile>> OutputFile::open(const std::string &path) {
  if (path.empty())
    return std::unique_ptr<OutputFile>(new FdOutput(STDOUT_FILENO, "to stdout", false));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return make_error("failed to open output file '" + path + "': " + std::strerror(errno));
  return std::unique_ptr<OutputFile>(new FdOutput(fd, "output file '" + path + "'", true));
}

bool same_file(const std::string &path, const std::string &script) {
  struct stat a {
  }, b{};
  return ::stat(path.c_str(), &a) == 0 && ::stat(script.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

} // namespace gpubt::driver
