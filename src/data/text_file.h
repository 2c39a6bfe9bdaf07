// Reading a user's text file, whole or in pieces: the corpus, the probe set, eval's --text-file. Errors
// name the path: a file that is missing or not a regular file is the user's InputError;
// a read that fails part-way is an IoError.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace mg {

// The file's bytes; WHAT names it in errors ("corpus", "probe set", ...).
std::string read_file_bytes(const std::filesystem::path& path, const std::string& what);

// The file's code points (data/utf8.h); invalid UTF-8 names the path and the byte offset.
std::u32string read_utf8_file(const std::filesystem::path& path, const std::string& what);

// Streams the file's code points without holding the file: calls visit(symbols) on
// successive pieces (about 1 MB of bytes each) and returns the total count. Memory stays
// bounded by the piece size. Errors as read_utf8_file's (offsets from the file's start).
int64_t for_each_utf8_piece(const std::filesystem::path& path, const std::string& what,
                            const std::function<void(std::u32string_view symbols)>& visit);

}  // namespace mg
