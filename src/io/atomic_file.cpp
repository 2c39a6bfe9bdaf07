// The atomic writer (io/atomic_file.h): check the target, write a temporary beside it,
// fsync, rename, fsync the folder. And the appender of a log that grows by lines.
#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "data/text_file.h"
#include "core/error.h"

namespace mg {
namespace {

namespace fs = std::filesystem;

std::string cannot_write(const fs::path& path, int error_number) {
  return "cannot write " + path.string() + ": " + std::strerror(error_number);
}

// The temporary being written, for remove_pending_temporary to unlink from a signal
// handler: a fixed buffer (a handler may not allocate) and a flag set once it holds a path.
char g_pending[4096];
volatile std::sig_atomic_t g_pending_set = 0;

// Registers TEMP as pending (unless its path is too long for the buffer, when a kill
// leaves it for the next run's clean-up, as before).
void set_pending(const fs::path& temp) {
  g_pending_set = 0;
  const std::string& text = temp.native();
  if (text.size() >= sizeof g_pending) return;
  std::memcpy(g_pending, text.c_str(), text.size() + 1);
  g_pending_set = 1;
}

// The temporary's name: ".NAME.tmp.PID", with NAME cut when the whole would pass the 255
// bytes a file name may hold (a legal 254-byte NAME still gets its temporary).
std::string temporary_name(const std::string& name) {
  constexpr size_t kMaxName = 255;
  const std::string suffix = ".tmp." + std::to_string(::getpid());
  const size_t room = kMaxName - 1 - suffix.size();
  std::string temp_name = ".";  // (built in steps: GCC 12 warns falsely on the one-line form)
  temp_name += name.substr(0, std::min(name.size(), room));
  temp_name += suffix;
  return temp_name;
}


}  // namespace

int write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

void refuse_non_regular_target(const fs::path& path) {
  if (path.empty()) throw InputError("an output path is empty, expected a file name");
  if (path.filename().empty() || path.filename() == "." || path.filename() == "..")
    throw InputError("output " + path.string() + " names a folder, expected a file name");
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return;  // absent (or unreachable: the open will say why)
  if (!S_ISREG(info.st_mode))
    throw InputError("output " + path.string() + " is " + file_kind_name(info.st_mode) +
                     "; refusing to replace it with a regular file");
}

void write_file_atomically(const fs::path& path, const WriteBody& write_body) {
  refuse_non_regular_target(path);
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  // Hidden and suffixed with the pid, so it is never taken for the file itself and two
  // processes writing the same target do not share a temporary.
  const fs::path temp = folder / temporary_name(path.filename().string());

  ::unlink(temp.c_str());  // a leftover of an earlier process that had this pid
  set_pending(temp);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    g_pending_set = 0;
    throw IoError(cannot_write(path, errno));
  }
  auto fail = [&](int error_number) {
    if (fd >= 0) ::close(fd);
    g_pending_set = 0;
    ::unlink(temp.c_str());
    throw IoError(cannot_write(path, error_number));
  };
  if (int e = write_body(fd)) fail(e);
  if (::fsync(fd) != 0) fail(errno);
  const int close_result = ::close(fd);
  fd = -1;
  if (close_result != 0) fail(errno);
  try {
    refuse_non_regular_target(path);  // again: something may have appeared meanwhile
  } catch (...) {
    g_pending_set = 0;
    ::unlink(temp.c_str());
    throw;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) fail(errno);
  g_pending_set = 0;  // (a signal between the rename and here unlinks a name no longer there)

  // The rename is durable only once the folder's entry is on disk.
  const int folder_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder_fd < 0) throw IoError(cannot_write(path, errno));
  const int sync_result = ::fsync(folder_fd);
  const int sync_errno = errno;
  ::close(folder_fd);
  if (sync_result != 0) throw IoError(cannot_write(path, sync_errno));
}

void remove_pending_temporary() noexcept {
  if (g_pending_set) ::unlink(g_pending);
}

void write_text_atomically(const fs::path& path, const std::string& text) {
  write_file_atomically(path, [&](int fd) { return write_all(fd, text.data(), text.size()); });
}

AppendFile::AppendFile(fs::path path)
    : path_(std::move(path)),
      fd_(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644)) {
  if (fd_ < 0) throw IoError("cannot append to " + path_.string() + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd_);
    throw InputError("cannot append to " + path_.string() + ": not a regular file");
  }
}

AppendFile::~AppendFile() { ::close(fd_); }

void AppendFile::append(const std::string& text) {
  if (int error_number = write_all(fd_, text.data(), text.size()))
    throw IoError("cannot append to " + path_.string() + ": " + std::strerror(error_number));
}

}  // namespace mg
