// Whole-file reads with errors that say which file and why.
#include "data/text_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "data/utf8.h"
#include "tensor/error.h"

namespace mg {

namespace {

constexpr size_t kPieceBytes = size_t(1) << 20;

std::ifstream open_text_file(const std::filesystem::path& path, const std::string& what) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status))
    throw InputError(what + " " + path.string() + " does not exist");
  if (std::filesystem::is_directory(status))
    throw InputError(what + " " + path.string() + " is a directory, expected a text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open " + what + " " + path.string() + ": " + std::strerror(errno));
  return in;
}

}  // namespace

std::string read_file_bytes(const std::filesystem::path& path, const std::string& what) {
  std::ifstream in = open_text_file(path, what);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw IoError("cannot read " + what + " " + path.string() + ": " + std::strerror(errno));
  return bytes;
}

std::u32string read_utf8_file(const std::filesystem::path& path, const std::string& what) {
  return decode_utf8(read_file_bytes(path, what), path.string());
}

// Each piece is the bytes read so far that end on a whole UTF-8 sequence; the (at most 3)
// bytes of a sequence the read cut short are carried to the head of the next piece.
int64_t for_each_utf8_piece(const std::filesystem::path& path, const std::string& what,
                            const std::function<void(std::u32string_view symbols)>& visit) {
  std::ifstream in = open_text_file(path, what);
  std::string bytes;       // carried bytes + this read
  std::u32string symbols;  // decoded piece
  uint64_t offset = 0;     // file offset of bytes[0]
  int64_t count = 0;
  for (bool more = true; more;) {
    const size_t carried = bytes.size();
    bytes.resize(carried + kPieceBytes);
    in.read(bytes.data() + carried, static_cast<std::streamsize>(kPieceBytes));
    if (in.bad()) throw IoError("cannot read " + what + " " + path.string() + ": " + std::strerror(errno));
    bytes.resize(carried + static_cast<size_t>(in.gcount()));
    more = in.gcount() > 0;
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
