// Whole-file reads with errors that say which file and why.
#include "data/text_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "data/utf8.h"
#include "tensor/error.h"

namespace mg {

std::string read_file_bytes(const std::filesystem::path& path, const std::string& what) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status))
    throw InputError(what + " " + path.string() + " does not exist");
  if (std::filesystem::is_directory(status))
    throw InputError(what + " " + path.string() + " is a directory, expected a text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open " + what + " " + path.string() + ": " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw IoError("cannot read " + what + " " + path.string() + ": " + std::strerror(errno));
  return bytes;
}

std::u32string read_utf8_file(const std::filesystem::path& path, const std::string& what) {
  return decode_utf8(read_file_bytes(path, what), path.string());
}

}  // namespace mg
