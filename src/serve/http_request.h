// One HTTP/1.x request as `mini-gpt serve` reads it, from the bytes received so far: the
// request line, at most kMaxHeaderLines headers of at most kMaxHeaderBytes in all, and a
// body of at most kMaxBodyBytes (Content-Length or chunked). Each limit is checked as the
// bytes arrive, so nothing past it is ever held: a 64 MiB chunked body or 64,000 header
// lines cost the server a few kilobytes before they are refused. Nothing here knows a
// socket; serve/server.cpp feeds it and answers what it decides.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "serve/api.h"

namespace mg::serve {

// The longest query string answered: 8,000 bytes, the limit cpp-httplib 0.11 (which served
// before issue 53) imposed, kept so that links and the page's checks stay valid; a text of
// block_size 64 CJK symbols, percent-encoded, is 576 bytes.
inline constexpr size_t kMaxQueryBytes = 8000;
inline constexpr size_t kMaxRequestLineBytes = 8192;  // method, target and protocol
inline constexpr size_t kMaxHeaderLines = 100;        // a browser sends about 15
inline constexpr size_t kMaxHeaderBytes = 16384;      // every header line together
inline constexpr size_t kMaxBodyBytes = 8000;         // a GET has none; more is refused (413)

struct HttpRequest {
  std::string method;                                     // as sent: "GET", "HEAD", ...
  std::string path;                                       // percent-decoded, without the query
  std::string query;                                      // as sent, after '?'
  QueryParams params;                                     // the query decoded, in order
  std::vector<std::pair<std::string, std::string>> headers;  // names as sent

  // The value of header NAME (case-insensitive), "" when absent.
  std::string header(std::string_view name) const;
};

// What the bytes received so far amount to.
struct HeadReading {
  enum class State { incomplete, complete, refused } state = State::incomplete;
  HttpRequest request;  // when complete
  int status = 0;       // when refused: 400, 413, 431
  std::string error;    // when refused: one line naming the limit or the fault
};

// Reads RECEIVED, everything the client has sent so far on the connection. Incomplete
// until the empty line after the headers and, for a chunked body, its last chunk (a
// Content-Length body is never waited for: the connection carries one request and is
// closed after it). Refused at the first limit passed or byte that is no HTTP.
HeadReading read_request(std::string_view received);

// The bytes of an answer: status line, the fixed headers (Cache-Control: no-store,
// nosniff, Content-Length, Connection: close), EXTRA headers, then BODY unless HEAD_ONLY.
std::string http_response(int status, std::string_view content_type, const std::string& body,
                          const std::vector<std::pair<std::string, std::string>>& extra, bool head_only);

// "%E5%B0%8F" -> the bytes E5 B0 8F; with PLUS_IS_SPACE (the query) '+' -> ' '.
std::string percent_decode(std::string_view text, bool plus_is_space);

}  // namespace mg::serve
