// The one writer of every file mini-gpt creates: checkpoints, config.json, metrics.jsonl,
// inspect-heads' --svg; and, for a log that grows by lines, the appender below. The
// bytes of a whole file go to a hidden temporary ".NAME.tmp.PID" in the
// target's own folder (so the rename cannot cross file systems), are fsync'ed, and only
// then renamed over the target, and the folder is fsync'ed: a reader, a crash, a full
// disk or a kill sees the old file or the new one, never half of one.
// The target must be a regular file or absent: a device node, FIFO, symlink or folder at
// the path is refused (rename would replace it, and as root `--svg /dev/null` would
// destroy /dev/null).
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace mg {

// Writes the file's contents to the open descriptor FD; returns 0 or an errno value.
using WriteBody = std::function<int(int fd)>;

// InputError for an empty path, a path that names no file ("dir/") or a target that is
// not a regular file; IoError "cannot write PATH: <reason>" when the OS fails, after which
// PATH is as it was and the temporary is gone.
void write_file_atomically(const std::filesystem::path& path, const WriteBody& write_body);

// Unlinks the temporary that write_file_atomically is writing, if any: async-signal-safe,
// for the command line's SIGINT and SIGTERM handlers, so that a kill leaves no
// ".NAME.tmp.PID" behind. (A temporary's NAME is cut when the whole would pass 255 bytes.)
void remove_pending_temporary() noexcept;

// The same for text in memory.
void write_text_atomically(const std::filesystem::path& path, const std::string& text);

// Writes all `size` bytes, retrying short writes and EINTR; returns 0 or an errno value.
int write_all(int fd, const void* data, size_t size);

// The InputError above, alone: for a caller that opens PATH itself.
void refuse_non_regular_target(const std::filesystem::path& path);

// A file that grows by appends (metrics.jsonl, a line per training step), through a plain
// O_APPEND descriptor so that a failed write (a full disk) is reported with its reason.
// The file is first written whole, atomically; O_NOFOLLOW and O_NONBLOCK keep a symlink
// or FIFO put there since from being followed or blocking, and anything but a regular
// file is refused (InputError "cannot append to PATH: not a regular file"). IoError
// "cannot append to PATH: <reason>" when the OS fails.
class AppendFile {
 public:
  explicit AppendFile(std::filesystem::path path);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  void append(const std::string& text);

 private:
  std::filesystem::path path_;
  int fd_;
};

}  // namespace mg
