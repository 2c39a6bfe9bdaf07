// Reading a user's file, whole or in pieces: the corpus, the probe set, eval's --text-file,
// a prompt, a config. Every read first opens the path without blocking and checks that
// it is a regular file, so a FIFO cannot hang us and /dev/zero cannot fill the memory;
// a whole-file read is bounded by a stated size. Errors name the path: a file that is
// missing, not a regular file or too large is the user's InputError; a read that fails
// part-way is an IoError.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace mg {

// What a file of this st_mode is, for messages: "a directory", "a FIFO", "a symbolic
// link", ... or "not a regular file".
const char* file_kind_name(unsigned mode);

// Size bounds of the files read whole (the corpus is streamed, so its bound only keeps
// its ids, 1 to 4 bytes a symbol, within reason).
inline constexpr uint64_t kMaxTextFileBytes = uint64_t(64) << 20;    // texts, prompts, probe sets: 64 MB
inline constexpr uint64_t kMaxCorpusBytes = uint64_t(16) << 30;      // 16 GB

// An open regular file, read-only; closes itself. Opening refuses (InputError naming WHAT
// and the path) a missing file, anything that is not a regular file (folder, FIFO,
// device, socket) and a file larger than max_bytes.
class RegularFile {
 public:
  RegularFile(const std::filesystem::path& path, const std::string& what, uint64_t max_bytes);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  uint64_t size() const { return size_; }  // when opened
  // Reads up to `capacity` bytes; 0 at the end of the file. IoError on a failed read.
  size_t read_some(char* destination, size_t capacity);

 private:
  std::filesystem::path path_;
  std::string what_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The file's bytes, at most max_bytes (a file that grows past it while read is refused
// too); WHAT names it in errors ("corpus", "probe set", ...).
std::string read_file_bytes(const std::filesystem::path& path, const std::string& what,
                            uint64_t max_bytes = kMaxTextFileBytes);

// The file's code points (data/utf8.h); invalid UTF-8 names the path and the byte offset.
std::u32string read_utf8_file(const std::filesystem::path& path, const std::string& what,
                              uint64_t max_bytes = kMaxTextFileBytes);

// Streams the file's code points without holding the file: calls visit(symbols) on
// successive pieces (about 1 MB of bytes each) and returns the total count. Memory stays
// bounded by the piece size. Errors as read_utf8_file's (offsets from the file's start).
int64_t for_each_utf8_piece(const std::filesystem::path& path, const std::string& what,
                            const std::function<void(std::u32string_view symbols)>& visit,
                            uint64_t max_bytes = kMaxCorpusBytes);

}  // namespace mg
