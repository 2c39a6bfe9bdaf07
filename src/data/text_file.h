// Reading a user's text file whole: the corpus, the probe set, eval's --text-file. Errors
// name the path: a file that is missing or not a regular file is the user's InputError;
// a read that fails part-way is an IoError.
#pragma once

#include <filesystem>
#include <string>

namespace mg {

// The file's bytes; WHAT names it in errors ("corpus", "probe set", ...).
std::string read_file_bytes(const std::filesystem::path& path, const std::string& what);

// The file's code points (data/utf8.h); invalid UTF-8 names the path and the byte offset.
std::u32string read_utf8_file(const std::filesystem::path& path, const std::string& what);

}  // namespace mg
