// The HTTP server of `mini-gpt serve`: the live page at / (several runs' pages side by side),
// the JSON endpoints at /api/ (serve/api.h), the model's description at /api/info and the
// watched run at /api/run, each about the model run= and step= choose (serve/model_choice.h).
// Safe by default:
// - it binds the address given (127.0.0.1 unless told otherwise);
// - a request whose Host header is not that address, localhost or 127.0.0.1 with the port
//   is refused (403: a page of another site cannot reach it by DNS rebinding);
// - every client is bounded in time and size (serve/http_request.h has the limits): its
//   request must arrive whole within kRequestDeadline of the connection, however the bytes
//   trickle in; a request line over 8,192 bytes, a query over 8,000, a body over 8,000
//   (Content-Length or chunked) is refused (413), more than 100 header lines or 16 KiB of
//   them (431); its answer must be taken within kWriteDeadline;
// - a connection is read and written by one thread that waits on all of them at once
//   (poll), so an idle or slow client never holds a worker: WORKERS threads compute
//   requests that have arrived whole, QUEUE such requests wait, more are answered 429 at
//   once; at most kMaxReading connections are read at a time, a new one closing the one
//   read longest;
// - a method other than GET or HEAD is refused (405), an unknown path (404);
// every error is JSON {"error": "..."} with its control characters shown as '?', and no
// request stops the server or names a file it reads or writes.
//
// Why not cpp-httplib, which served until issue 53: Debian's 0.11 restarts its read
// timeout with every line received (two clients sending a header line every 2 s held the
// server), hands a connection to a worker before a byte has arrived (an idle connection
// held a thread), has no limit on the number of header lines and reads a chunked body
// whole before any handler sees it; these are compiled into its shared library.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "serve/http_request.h"
#include "serve/run_watch.h"
#include "serve/served_model.h"

namespace mg::serve {

// A request must arrive whole within this time of its connection's accept, and its answer
// be taken within kWriteDeadline of being ready: a per-request deadline, not per line.
inline constexpr int kRequestDeadlineMs = 5000;
inline constexpr int kWriteDeadlineMs = 5000;
// Connections read at once; beyond, a new one closes the one read longest (a real client's
// request arrives in milliseconds, so only a slow or idle one is ever the oldest).
inline constexpr size_t kMaxReading = 64;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;      // 0: any free port (the one bound is printed)
  int workers = 2;      // requests computed at once
  int queue = 32;       // connections waiting for a worker; more are answered 429
  std::string default_text;  // the text the page opens with
};

class Server {
 public:
  // RUNS: the watched runs (none without --run), the first serving SERVED with PROBES;
  // a request's run= and step= choose among them (serve/model_choice.h).
  Server(ServerOptions options, ServedModel& served, const ProbeSet& probes, std::vector<RunWatch*> runs);
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
