// The HTTP server of `mini-gpt serve` (cpp-httplib, Debian's libcpp-httplib-dev): the live
// page at /, the JSON endpoints at /api/ (serve/api.h), the model's description at
// /api/info and the watched run at /api/run. Safe by default:
// - it binds the address given (127.0.0.1 unless told otherwise);
// - a request whose Host header is not that address, localhost or 127.0.0.1 with the port
//   is refused (403: a page of another site cannot reach it by DNS rebinding);
// - a query string longer than kMaxQueryBytes, a body, or a request line longer than the
//   library reads is refused (413); a method other than GET (405); an unknown path (404);
// - WORKERS threads answer, QUEUE connections wait, and a connection beyond them is answered
//   429 at once by a thread of its own;
// every error is JSON {"error": "..."}, and no request stops the server or names a file it
// reads or writes.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "serve/run_watch.h"
#include "serve/served_model.h"

namespace mg::serve {

// The longest query string answered. cpp-httplib 0.11 as Debian builds it reads request
// lines up to 8,192 bytes (CPPHTTPLIB_REQUEST_URI_MAX_LENGTH, compiled into the shared
// library: a #define here cannot raise it), so the limit is 8 KiB less the room for the
// method, the path and the protocol; a text of block_size 64 CJK symbols, percent-encoded,
// is 576 bytes.
inline constexpr size_t kMaxQueryBytes = 8000;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;      // 0: any free port (the one bound is printed)
  int workers = 2;      // requests computed at once
  int queue = 32;       // connections waiting for a worker; more are answered 429
  std::string default_text;  // the text the page opens with
};

class Server {
 public:
  // RUN may be null (no --run).
  Server(ServerOptions options, ServedModel& served, const ProbeSet& probes, RunWatch* run);
  ~Server();

  // Binds the address; InputError naming it when it cannot (a port in use). Returns the port.
  int bind();
  // Serves until stop(); returns then.
  void serve();
  // From any thread (a signal watcher): serve() returns within a second.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The live page (src/serve/page/ with the drawing and style it shares with the head
// explorer, src/report/page/), one self-contained HTML document.
std::string live_page();

}  // namespace mg::serve
