// The one writer of every file mini-gpt creates: checkpoints, config.json, metrics.jsonl,
// inspect-heads' --svg. The bytes go to a hidden temporary ".NAME.tmp.PID" in the
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

// The same for text in memory.
void write_text_atomically(const std::filesystem::path& path, const std::string& text);

// Writes all `size` bytes, retrying short writes and EINTR; returns 0 or an errno value.
int write_all(int fd, const void* data, size_t size);

// The InputError above, alone: for a caller that opens PATH itself (an append).
void refuse_non_regular_target(const std::filesystem::path& path);

}  // namespace mg
