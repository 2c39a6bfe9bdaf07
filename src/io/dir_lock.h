// An exclusive lock on a folder: flock(2) on a file ".lock" inside it. The kernel drops
// the lock when the holder's descriptor closes, so a process that dies (SIGKILL, power
// cut aside) never leaves a lock behind to block a later run; a second process that asks
// while the holder lives is refused at once, not made to wait.
#pragma once

#include <filesystem>
#include <string>

namespace mg {

// The lock file's name; it stays in the folder after the lock is released (removing it
// would let a third process lock a fresh file while a second still holds the old one).
inline constexpr const char* kLockFileName = ".lock";

class DirectoryLock {
 public:
  // Locks DIR (which must exist). InputError "WHAT DIR is in use by another process (pid
  // N)" when another process holds it; IoError when the lock file cannot be opened.
  DirectoryLock(const std::filesystem::path& dir, const std::string& what);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace mg
