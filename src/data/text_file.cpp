// Whole-file and streamed reads with errors that say which file and why.
#include "data/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "data/utf8.h"
#include "core/error.h"

namespace mg {

namespace {

constexpr size_t kPieceBytes = size_t(1) << 20;

}  // namespace

const char* file_kind_name(unsigned mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

RegularFile::RegularFile(const std::filesystem::path& path, const std::string& what, uint64_t max_bytes)
    : path_(path), what_(what) {
  const std::string name = what + " " + path.string();
  if (path.empty()) throw InputError(what + ": the path is empty");
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) {
    const int error_number = errno;
    if (error_number == ENOENT) throw InputError(name + " does not exist");
    throw InputError("cannot open " + name + ": " + std::strerror(error_number));
  }
  struct stat info {};
  if (::fstat(fd_, &info) != 0) {
    const int error_number = errno;
    ::close(fd_);
    throw IoError("cannot read " + name + ": " + std::strerror(error_number));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd_);
    throw InputError(name + " is " + file_kind_name(info.st_mode) + ", expected a text file");
  }
  size_ = static_cast<uint64_t>(info.st_size);
  if (size_ > max_bytes) {
    ::close(fd_);
    throw InputError(name + " is " + std::to_string(size_) + " bytes, more than the limit of " +
                     std::to_string(max_bytes));
  }
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

size_t RegularFile::read_some(char* destination, size_t capacity) {
  while (true) {
    const ssize_t n = ::read(fd_, destination, capacity);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno != EINTR) throw IoError("cannot read " + what_ + " " + path_.string() + ": " + std::strerror(errno));
  }
}

std::string read_file_bytes(const std::filesystem::path& path, const std::string& what, uint64_t max_bytes) {
  RegularFile file(path, what, max_bytes);
  std::string bytes;
  bytes.resize(static_cast<size_t>(file.size()));
  size_t filled = 0;
  while (true) {
    if (filled == bytes.size()) {  // the file may have grown since fstat: read on, within the bound
      if (bytes.size() > max_bytes) break;
      bytes.resize(std::min<uint64_t>(max_bytes + 1, std::max<uint64_t>(bytes.size() * 2, 4096)));
    }
    const size_t n = file.read_some(bytes.data() + filled, bytes.size() - filled);
    if (n == 0) break;
    filled += n;
  }
  if (filled > max_bytes)
    throw InputError(what + " " + path.string() + " grew past the limit of " + std::to_string(max_bytes) +
                     " bytes while it was read");
  bytes.resize(filled);
  return bytes;
}

std::u32string read_utf8_file(const std::filesystem::path& path, const std::string& what, uint64_t max_bytes) {
  return decode_utf8(read_file_bytes(path, what, max_bytes), path.string());
}

// Each piece is the bytes read so far that end on a whole UTF-8 sequence; the (at most 3)
// bytes of a sequence the read cut short are carried to the head of the next piece.
int64_t for_each_utf8_piece(const std::filesystem::path& path, const std::string& what,
                            const std::function<void(std::u32string_view symbols)>& visit, uint64_t max_bytes) {
  RegularFile file(path, what, max_bytes);
  std::string bytes;       // carried bytes + this read
  std::u32string symbols;  // decoded piece
  uint64_t offset = 0;     // file offset of bytes[0]
  int64_t count = 0;
  for (bool more = true; more;) {
    const size_t carried = bytes.size();
    bytes.resize(carried + kPieceBytes);
    const size_t n = file.read_some(bytes.data() + carried, kPieceBytes);
    bytes.resize(carried + n);
    more = n > 0;
    if (offset + bytes.size() > max_bytes)
      throw InputError(what + " " + path.string() + " grew past the limit of " + std::to_string(max_bytes) +
                       " bytes while it was read");
    symbols.clear();
    const size_t used = decode_utf8_chunk(bytes, offset, more, path.string(), symbols);
    if (!symbols.empty()) visit(symbols);
    count += static_cast<int64_t>(symbols.size());
    bytes.erase(0, used);
    offset += used;
  }
  return count;
}

}  // namespace mg
