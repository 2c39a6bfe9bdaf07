// DirectoryLock: flock on DIR/.lock, the holder's pid written into it for the refusal.
#include "io/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace mg {
namespace {

// The pid the holder wrote, or "" when it cannot be read (it may be writing it now).
std::string holder_pid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  std::string pid = n > 0 ? std::string(text, static_cast<size_t>(n)) : std::string();
  return pid.find_first_not_of("0123456789\n") == std::string::npos ? pid.substr(0, pid.find('\n')) : "";
}

}  // namespace

DirectoryLock::DirectoryLock(const std::filesystem::path& dir, const std::string& what) {
  const std::filesystem::path file = dir / kLockFileName;
  // O_NOFOLLOW and O_NONBLOCK: a symlink or FIFO planted at the name is not followed or waited on.
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError("cannot lock " + what + " " + dir.string() + ": " + file.string() + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd_);
    throw InputError("cannot lock " + what + " " + dir.string() + ": " + file.string() + " is not a regular file");
  }
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int error_number = errno;
    const std::string pid = error_number == EWOULDBLOCK ? holder_pid(fd_) : "";
    ::close(fd_);
    if (error_number == EWOULDBLOCK)
      throw InputError(what + " " + dir.string() + " is in use by another mini-gpt process" +
                       (pid.empty() ? "" : " (pid " + pid + ")") + "; wait for it to finish or choose another --out");
    throw IoError("cannot lock " + what + " " + dir.string() + ": " + std::strerror(error_number));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  // Best effort: the pid only makes the refusal more helpful.
  if (::ftruncate(fd_, 0) == 0) {
    const ssize_t written = ::pwrite(fd_, pid.data(), pid.size(), 0);
    (void)written;
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace mg
