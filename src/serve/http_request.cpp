// Reading one HTTP/1.x request within its limits, and writing an answer (serve/http_request.h).
#include "serve/http_request.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "core/error.h"

namespace mg::serve {
namespace {

constexpr size_t kNpos = std::string_view::npos;
// A chunked body's bytes on the wire (sizes, extensions, line ends included): bounded too,
// so that 8,000 one-byte chunks cannot make the server re-read half a megabyte.
constexpr size_t kMaxChunkedBytes = 2 * kMaxBodyBytes;

bool is_token_char(unsigned char c) {  // RFC 9110's tchar
  return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != kNpos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return is_token_char(static_cast<unsigned char>(c)); });
}

std::string_view without_cr(std::string_view line) {
  return !line.empty() && line.back() == '\r' ? line.substr(0, line.size() - 1) : line;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string with_commas(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The query's NAME=VALUE pairs, decoded, in the order sent; a pair without a name is skipped.
QueryParams parse_query(std::string_view query) {
  QueryParams params;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == kNpos ? std::string_view() : query.substr(amp + 1);
    const size_t eq = pair.find('=');
    std::string name = percent_decode(pair.substr(0, eq), true);
    if (name.empty()) continue;
    params.emplace_back(std::move(name), eq == kNpos ? std::string() : percent_decode(pair.substr(eq + 1), true));
  }
  return params;
}

struct BodyReading {
  bool complete = false;
  int status = 0;  // 400 or 413 when refused
  std::string error;
};

// A chunked body from BODY (the bytes after the headers): complete at its last chunk
// (trailers are not waited for), refused past kMaxBodyBytes of data.
BodyReading read_chunked(std::string_view body) {
  BodyReading r;
  if (body.size() > kMaxChunkedBytes) {
    r.status = 413;
    r.error = "the request body, sent in chunks, is longer than the " + with_commas(kMaxBodyBytes) +
              " bytes the server reads";
    return r;
  }
  size_t pos = 0, total = 0;
  for (;;) {
    const size_t eol = body.find('\n', pos);
    if (eol == kNpos) return r;  // the size line is still coming
    std::string_view line = without_cr(body.substr(pos, eol - pos));
    line = trimmed(line.substr(0, line.find(';')));  // a chunk extension is ignored
    size_t size = 0;
    if (line.empty() || line.size() > 8 ||
        !std::all_of(line.begin(), line.end(), [](char c) { return hex_digit(c) >= 0; })) {
      r.status = line.size() > 8 && std::all_of(line.begin(), line.end(), [](char c) { return hex_digit(c) >= 0; })
                     ? 413 : 400;
      r.error = r.status == 413 ? "the request body has a chunk larger than the " + with_commas(kMaxBodyBytes) +
                                      " bytes the server reads"
                                : "a chunk of the request body has no valid size";
      return r;
    }
    for (char c : line) size = size * 16 + static_cast<size_t>(hex_digit(c));
    pos = eol + 1;
    if (size == 0) {
      r.complete = true;
      return r;
    }
    total += size;
    if (total > kMaxBodyBytes) {
      r.status = 413;
      r.error = "the request body, sent in chunks, is longer than the " + with_commas(kMaxBodyBytes) +
                " bytes the server reads";
      return r;
    }
    if (body.size() < pos + size + 1) return r;  // the chunk's data is still coming
    pos += size;
    if (body[pos] == '\r') {
      if (body.size() < pos + 2) return r;
      ++pos;
    }
    if (body[pos] != '\n') {
      r.status = 400;
      r.error = "a chunk of the request body is longer than its size";
      return r;
    }
    ++pos;
  }
}

}  // namespace

std::string HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (same_name(key, name)) return value;
  return "";
}

std::string percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size() && hex_digit(text[i + 1]) >= 0 && hex_digit(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(text[i + 1]) * 16 + hex_digit(text[i + 2]));
      i += 2;
    } else {
      out += plus_is_space && c == '+' ? ' ' : c;
    }
  }
  return out;
}

HeadReading read_request(std::string_view in) {
  HeadReading r;
  auto refuse = [&r](int status, std::string error) {
    r.state = HeadReading::State::refused;
    r.status = status;
    r.error = std::move(error);
    return r;
  };
  const std::string line_too_long =
      "the request line is longer than the " + with_commas(kMaxRequestLineBytes) + " bytes the server reads";
  const size_t line_end = in.find('\n');
  if (line_end == kNpos) return in.size() > kMaxRequestLineBytes + 1 ? refuse(413, line_too_long) : r;
  if (line_end > kMaxRequestLineBytes + 1) return refuse(413, line_too_long);
  const std::string_view line = without_cr(in.substr(0, line_end));

  // The headers, each limit checked on the lines received so far.
  HttpRequest& req = r.request;
  size_t pos = line_end + 1;
  const std::string too_many = "more than " + std::to_string(kMaxHeaderLines) + " header lines";
  const std::string too_long = "the headers are longer than the " + with_commas(kMaxHeaderBytes) + " bytes the server reads";
  for (;;) {
    const size_t eol = in.find('\n', pos);
    if (eol == kNpos) return in.size() - (line_end + 1) > kMaxHeaderBytes ? refuse(431, too_long) : r;
    const std::string_view h = without_cr(in.substr(pos, eol - pos));
    pos = eol + 1;
    if (h.empty()) break;
    if (req.headers.size() == kMaxHeaderLines) return refuse(431, too_many);
    if (pos - (line_end + 1) > kMaxHeaderBytes) return refuse(431, too_long);
    const size_t colon = h.find(':');
    if (colon == kNpos || !is_token(h.substr(0, colon)))
      return refuse(400, "header line " + std::to_string(req.headers.size() + 1) + " is not NAME: VALUE");
    req.headers.emplace_back(std::string(h.substr(0, colon)), std::string(trimmed(h.substr(colon + 1))));
  }

  // The request line: METHOD TARGET HTTP/1.x.
  const size_t sp1 = line.find(' '), sp2 = sp1 == kNpos ? kNpos : line.find(' ', sp1 + 1);
  if (sp2 == kNpos || line.find(' ', sp2 + 1) != kNpos)
    return refuse(400, "the request line is not METHOD TARGET HTTP/1.1");
  req.method = std::string(line.substr(0, sp1));
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1), version = line.substr(sp2 + 1);
  if (!is_token(req.method)) return refuse(400, "the request line's method is not a word");
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return refuse(400, "the protocol must be HTTP/1.1 or HTTP/1.0");
  // Another method's target (CONNECT's host:port, OPTIONS *) is left for its 405.
  const bool read_method = req.method == "GET" || req.method == "HEAD";
  if (read_method && (target.empty() || target.front() != '/'))
    return refuse(400, "the request target must be a path starting with /");
  if (std::any_of(target.begin(), target.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
    return refuse(400, "the request target holds a control character");
  const size_t question = target.find('?');
  req.path = percent_decode(target.substr(0, question), false);
  req.query = question == kNpos ? std::string() : std::string(target.substr(question + 1));
  if (req.query.size() > kMaxQueryBytes)
    return refuse(413, "the query string has " + std::to_string(req.query.size()) + " bytes, more than the " +
                           std::to_string(kMaxQueryBytes) + " the server reads");
  req.params = parse_query(req.query);

  // The body: refused past its limit before any of it is needed; a chunked one is read
  // to its last chunk (its size is known only then), a Content-Length one not waited for.
  const std::string length = req.header("Content-Length"), encoding = req.header("Transfer-Encoding");
  if (!encoding.empty()) {
    if (!length.empty()) return refuse(400, "a request may not carry both Content-Length and Transfer-Encoding");
    if (!same_name(encoding, "chunked")) return refuse(400, "the only Transfer-Encoding read is chunked");
    BodyReading body = read_chunked(in.substr(pos));
    if (body.status != 0) return refuse(body.status, body.error);
    if (!body.complete) return r;
  } else if (!length.empty()) {
    if (!std::all_of(length.begin(), length.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return refuse(400, "Content-Length is not a number of bytes");
    if (length.size() > 18)
      return refuse(413, "the request body is larger than the " + with_commas(kMaxBodyBytes) + " bytes the server reads");
    const size_t bytes = std::stoull(length);
    if (bytes > kMaxBodyBytes)
      return refuse(413, "the request body has " + with_commas(bytes) + " bytes, more than the " +
                             with_commas(kMaxBodyBytes) + " the server reads");
  }
  r.state = HeadReading::State::complete;
  return r;
}

std::string http_response(int status, std::string_view content_type, const std::string& body,
                          const std::vector<std::pair<std::string, std::string>>& extra, bool head_only) {
  const char* reason = "Error";
  switch (status) {
    case 200: reason = "OK"; break;
    case 400: reason = "Bad Request"; break;
    case 403: reason = "Forbidden"; break;
    case 404: reason = "Not Found"; break;
    case 405: reason = "Method Not Allowed"; break;
    case 408: reason = "Request Timeout"; break;
    case 413: reason = "Content Too Large"; break;
    case 429: reason = "Too Many Requests"; break;
    case 431: reason = "Request Header Fields Too Large"; break;
    case 500: reason = "Internal Server Error"; break;
    default: break;
  }
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\n";
  out += "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n";
  out += "Content-Type: " + std::string(content_type) + "\r\n";
  for (const auto& [name, value] : extra) out += name + ": " + value + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (!head_only) out += body;
  return out;
}

}  // namespace mg::serve
