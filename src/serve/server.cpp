// The HTTP server of `mini-gpt serve` (serve/server.h): one thread that accepts, reads and
// writes every connection (poll), a bounded pool of workers that compute the requests that
// have arrived whole, the checks every request passes, and the routes.
#include "serve/server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <regex>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "kernels/runtime.h"
#include "live_assets.h"  // generated from src/serve/page/ at build time
#include "report/explorer.h"
#include "serve/api.h"
#include "serve/model_choice.h"

namespace mg::serve {
namespace {

using Clock = std::chrono::steady_clock;
using Headers = std::vector<std::pair<std::string, std::string>>;

// After its answer is written, a connection's unread bytes (a body never needed) are read
// and dropped for at most this long and this much, so that closing it does not reset the
// connection before the client has read the answer.
constexpr auto kDrainTime = std::chrono::milliseconds(1000);
constexpr size_t kMaxDrainBytes = size_t(1) << 20;

// The workers' side: requests that arrived whole wait in JOBS (at most QUEUE of them),
// WORKERS threads compute them, and the answers' bytes go back to the connection thread
// through DONE, which is woken by WAKE_FD (an eventfd). Shared, so that a worker still
// computing when the server stops holds what it touches.
struct WorkState {
  std::mutex mutex;
  std::condition_variable ready, finished_cv;
  struct Job {
    uint64_t connection;
    HttpRequest request;
  };
  std::deque<Job> jobs;
  std::vector<std::pair<uint64_t, std::string>> done;
  size_t finished = 0;
  bool stopping = false;
  int wake_fd = -1;
};

class WorkerPool {
 public:
  using Answer = std::function<std::string(const HttpRequest&)>;

  WorkerPool(size_t workers, size_t capacity, int wake_fd, Answer answer)
      : state_(std::make_shared<WorkState>()), capacity_(capacity) {
    state_->wake_fd = wake_fd;
    for (size_t i = 0; i < workers; ++i)
      threads_.emplace_back([state = state_, answer] { run(*state, answer); });
  }
  ~WorkerPool() { shutdown(); }

  // False when QUEUE requests already wait: the caller answers 429.
  bool submit(uint64_t connection, HttpRequest request) {
    {
      std::lock_guard lock(state_->mutex);
      if (state_->jobs.size() >= capacity_) return false;
      state_->jobs.push_back({connection, std::move(request)});
    }
    state_->ready.notify_one();
    return true;
  }

  std::vector<std::pair<uint64_t, std::string>> take_done() {
    std::lock_guard lock(state_->mutex);
    return std::exchange(state_->done, {});
  }

  // The workers finish what they compute, for at most half a second; one still busy then is
  // left to end with the process (it holds the state it shares, and wakes no closed fd).
  void shutdown() {
    {
      std::lock_guard lock(state_->mutex);
      if (state_->stopping) return;
      state_->stopping = true;
      state_->jobs.clear();
    }
    state_->ready.notify_all();
    std::unique_lock lock(state_->mutex);
    state_->finished_cv.wait_for(lock, std::chrono::milliseconds(500),
                                 [this] { return state_->finished == threads_.size(); });
    const bool all = state_->finished == threads_.size();
    lock.unlock();
    for (std::thread& t : threads_) all ? t.join() : t.detach();
    threads_.clear();
  }

 private:
  static void run(WorkState& state, const Answer& answer) {
    set_num_threads(1);  // omp_set_num_threads is per thread: this one's kernels on one core
    for (;;) {
      WorkState::Job job;
      {
        std::unique_lock lock(state.mutex);
        state.ready.wait(lock, [&] { return state.stopping || !state.jobs.empty(); });
        if (state.stopping) break;
        job = std::move(state.jobs.front());
        state.jobs.pop_front();
      }
      std::string bytes = answer(job.request);
      std::lock_guard lock(state.mutex);
      if (state.stopping) break;
      state.done.emplace_back(job.connection, std::move(bytes));
      const uint64_t one = 1;
      const ssize_t n = ::write(state.wake_fd, &one, sizeof one);
      (void)n;
    }
    std::lock_guard lock(state.mutex);
    ++state.finished;
    state.finished_cv.notify_all();
  }

  std::shared_ptr<WorkState> state_;
  size_t capacity_;
  std::vector<std::thread> threads_;
};

constexpr const char* kJson = "application/json; charset=utf-8";

std::string json_answer(int status, const std::string& body, bool head_only, const Headers& extra = {}) {
  return http_response(status, kJson, body, extra, head_only);
}

std::string error_answer(int status, const std::string& message, bool head_only, const Headers& extra = {}) {
  return json_answer(status, error_json(message), head_only, extra);
}

std::string model_info(const ModelSnapshot& s, const ProbeSet& probes, const ServerOptions& options, bool run,
                       size_t runs) {
  const ModelConfig& c = s.model.config();
  nlohmann::ordered_json info = {
      {"model",
       {{"n_layer", c.n_layer}, {"n_head", c.n_head}, {"n_embd", c.n_embd}, {"head_width", c.head_width()},
        {"block_size", c.block_size}, {"vocab_size", s.vocab.size()},
        {"position", position_name(c.position)}}},
      {"vocab", s.vocab.symbols()},
      {"text", options.default_text},
      {"step", s.step},
      {"source", s.source},
      {"generation", s.generation},
      {"probe", probes.items.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(probes.name)},
      {"run", run},
      {"runs", runs},
      {"max_query_bytes", kMaxQueryBytes}};
  return info.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string live_page() {
  std::string page = live_assets::kHtml;
  auto fill = [&page](const std::string& marker, std::string_view with) {
    const size_t at = page.find(marker);
    MG_CHECK(at != std::string::npos, "live.html lacks the marker " + marker);
    page.replace(at, marker.size(), with);
  };
  fill("/*@PAGE_CSS@*/", shared_page_css());
  fill("/*@LIVE_CSS@*/", live_assets::kCss);
  fill("/*@PAGE_JS@*/", shared_page_js());
  fill("/*@LIVE_JS@*/", live_assets::kJs);
  fill("<!--@REPLAY_TRACK@-->", shared_replay_html());
  return page;
}

// One client connection, from accept to close.
struct Connection {
  enum class Phase { reading, computing, writing, draining };
  int fd = -1;
  Phase phase = Phase::reading;
  std::string in;   // the request's bytes so far (reading)
  std::string out;  // the answer (writing)
  size_t sent = 0;
  size_t drained = 0;
  Clock::time_point accepted, deadline;
};

struct Server::Impl {
  ServerOptions options;
  ServedModel& served;
  const ProbeSet& probes;
  std::vector<RunWatch*> runs;  // the first serves SERVED
  std::string page = live_page();
  int port = 0;
  int listen_fd = -1;
  int wake_fd = -1;
  std::atomic<bool> stopping{false};
  std::list<std::pair<uint64_t, Connection>> connections;  // oldest first
  uint64_t next_id = 1;

  Impl(ServerOptions o, ServedModel& s, const ProbeSet& p, std::vector<RunWatch*> r)
      : options(std::move(o)), served(s), probes(p), runs(std::move(r)) {
    wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd < 0) throw IoError(std::string("cannot start the server: eventfd: ") + std::strerror(errno));
  }
  ~Impl() {
    if (listen_fd >= 0) ::close(listen_fd);
    for (auto& [id, c] : connections) ::close(c.fd);
    // A worker left computing at exit never writes to wake_fd: it sees `stopping` first.
    ::close(wake_fd);
  }

  // The Host header a page of this server sends: the bound address, localhost or
  // 127.0.0.1, with the port. Anything else is another site's page reaching this port
  // through a name it controls (DNS rebinding).
  bool host_allowed(const std::string& host) const {
    for (const std::string& name : {options.host, std::string("localhost"), std::string("127.0.0.1")}) {
      std::string allowed = name;  // (built in steps: GCC 12 warns falsely on the one-line form)
      allowed += ':';
      allowed += std::to_string(port);
      if (host == allowed) return true;
    }
    return false;
  }

  // A worker's answer to a request that passed the checks (GET or HEAD, this host).
  std::string answer(const HttpRequest& req) const {
    const bool head_only = req.method == "HEAD";
    static const std::regex api_path(R"(/api/([A-Za-z0-9_\-]*))");
    try {
      const char* page_policy =
          "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
          "img-src data:; frame-src 'self'";
      // Several runs: their pages side by side, each a frame of its own (/?run=I).
      if (req.path == "/" && runs.size() > 1 && std::none_of(req.params.begin(), req.params.end(), [](const auto& p) {
            return p.first == "run";
          }))
        return http_response(200, "text/html; charset=utf-8", runs_side_by_side_page(runs),
                             {{"Content-Security-Policy", page_policy}}, head_only);
      if (req.path == "/")
        return http_response(200, "text/html; charset=utf-8", page, {{"Content-Security-Policy", page_policy}},
                             head_only);
      // run= and step= choose the model every /api/ path answers about.
      QueryParams params = req.params;
      ModelChoice choice;
      try {
        choice = choose_model(params, served, probes, runs);
      } catch (const ChoiceRefused& refused) {
        return error_answer(refused.status, refused.message, head_only);
      }
      // `serve --run` started before the run's first checkpoint (and before any evaluation
      // it keeps): only the run is there yet.
      if (!choice.model && req.path != "/api/run")
        return error_answer(503, "no model yet: waiting for the run's first checkpoint (latest.safetensors)", head_only);
      if (req.path == "/api/info")
        return json_answer(200, model_info(*choice.model, *choice.probes, options, choice.run != nullptr, runs.size()),
                           head_only);
      if (req.path == "/api/run") {
        if (!choice.run) return error_answer(404, "no run is watched: start serve with --run DIR", head_only);
        return json_answer(200, choice.run->status_json(), head_only);
      }
      std::smatch match;
      if (std::regex_match(req.path, match, api_path)) {
        const ApiAnswer a = answer_api(match[1], params, *choice.model);
        return json_answer(a.status, a.body, head_only);
      }
      return error_answer(404, "no such path: " + error_text(req.path), head_only);
    } catch (const std::bad_alloc&) {
      return error_answer(500, "out of memory", head_only);
    } catch (const std::exception& e) {
      return error_answer(500, std::string("internal error: ") + e.what(), head_only);
    }
  }

  // --- The connection thread.

  void start_writing(Connection& c, std::string bytes) {
    c.phase = Connection::Phase::writing;
    c.in.clear();
    c.in.shrink_to_fit();
    c.out = std::move(bytes);
    c.sent = 0;
    c.deadline = Clock::now() + std::chrono::milliseconds(kWriteDeadlineMs);
  }

  // The request in C has arrived whole: refused here, or handed to a worker.
  void dispatch(uint64_t id, Connection& c, HttpRequest req, WorkerPool& pool) {
    const bool head_only = req.method == "HEAD";
    if (!host_allowed(req.header("Host")))
      return start_writing(c, error_answer(403,
                                           "the Host header must name this server (" + options.host + ":" +
                                               std::to_string(port) + ", localhost or 127.0.0.1 with the port), found \"" +
                                               error_text(req.header("Host")) + "\"",
                                           head_only));
    if (req.method != "GET" && req.method != "HEAD")
      return start_writing(c, error_answer(405, error_text(req.method) + " is not served: every endpoint answers GET",
                                           false, {{"Allow", "GET, HEAD"}}));
    if (!pool.submit(id, std::move(req)))
      return start_writing(c, error_answer(429, "busy: " + std::to_string(options.workers) + " requests computing and " +
                                                    std::to_string(options.queue) + " waiting; try again",
                                           head_only));
    c.phase = Connection::Phase::computing;
    c.in.clear();
    c.in.shrink_to_fit();
  }

  // Reads what C's client has sent; true when the connection is to be closed.
  bool on_readable(uint64_t id, Connection& c, WorkerPool& pool) {
    char buffer[16384];
    for (;;) {
      const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, 0);
      if (n == 0) return true;  // the client went away (or half-closed before a whole request)
      if (n < 0) return !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
      if (c.phase == Connection::Phase::draining) {
        c.drained += static_cast<size_t>(n);
        if (c.drained > kMaxDrainBytes) return true;
        continue;
      }
      c.in.append(buffer, static_cast<size_t>(n));
      HeadReading r = read_request(c.in);
      if (r.state == HeadReading::State::refused) {
        start_writing(c, error_answer(r.status, r.error, false));
        return false;
      }
      if (r.state == HeadReading::State::complete) {
        dispatch(id, c, std::move(r.request), pool);
        return false;
      }
      if (static_cast<size_t>(n) < sizeof buffer) return false;  // nothing more waiting
    }
  }

  // Writes what the socket takes of C's answer; true when the connection is to be closed.
  bool on_writable(Connection& c) {
    while (c.sent < c.out.size()) {
      const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n < 0) return !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
      c.sent += static_cast<size_t>(n);
    }
    // Answered: no more is written, and what the client still sends is read and dropped
    // for a moment, so that the close does not reset the connection under its answer.
    ::shutdown(c.fd, SHUT_WR);
    c.phase = Connection::Phase::draining;
    c.out.clear();
    c.out.shrink_to_fit();
    c.deadline = Clock::now() + kDrainTime;
    return false;
  }

  // One best-effort answer on a connection about to be closed (a deadline passed, or it
  // was evicted), never waited on.
  static void answer_and_close(Connection& c, int status, const std::string& message) {
    const std::string bytes = error_answer(status, message, false);
    const ssize_t n = ::send(c.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)n;
    ::close(c.fd);
  }

  void accept_new(WorkerPool& pool) {
    const size_t max_open = kMaxReading + static_cast<size_t>(options.workers + options.queue) + 256;
    for (int i = 0; i < 64; ++i) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // none waiting (or out of descriptors: tried again at the next wake-up)
      Connection c;
      c.fd = fd;
      c.accepted = Clock::now();
      c.deadline = c.accepted + std::chrono::milliseconds(kRequestDeadlineMs);
      size_t reading = 0;
      for (auto& [id, other] : connections) reading += other.phase == Connection::Phase::reading;
      if (reading >= kMaxReading) {  // the connection read longest makes room
        for (auto it = connections.begin(); it != connections.end(); ++it)
          if (it->second.phase == Connection::Phase::reading) {
            answer_and_close(it->second, 408, "the request did not arrive whole before newer connections needed room");
            connections.erase(it);
            break;
          }
      }
      if (connections.size() >= max_open) {
        answer_and_close(c, 429, "busy: " + std::to_string(connections.size()) + " connections open; try again");
        continue;
      }
      connections.emplace_back(next_id++, std::move(c));
      // Its request is usually there already: read at once, so that only a client still
      // sending stays among the connections being read (and can be the one read longest).
      auto& [id, added] = connections.back();
      bool close_it = on_readable(id, added, pool);
      if (!close_it && added.phase == Connection::Phase::writing) close_it = on_writable(added);
      if (close_it) {
        ::close(added.fd);
        connections.pop_back();
      }
    }
  }

  void loop(WorkerPool& pool) {
    std::string late_message = "the request did not arrive whole within ";
    late_message += std::to_string(kRequestDeadlineMs / 1000);
    late_message += " s of the connection";
    std::vector<pollfd> fds;
    std::vector<std::list<std::pair<uint64_t, Connection>>::iterator> polled;
    while (!stopping.load()) {
      // Answers the workers have finished.
      for (auto& [id, bytes] : pool.take_done())
        for (auto& [cid, c] : connections)
          if (cid == id && c.phase == Connection::Phase::computing) start_writing(c, std::move(bytes));
      // Deadlines: a request not whole in time is answered 408; an answer not taken in time,
      // or a drain done, closes the connection.
      const Clock::time_point now = Clock::now();
      Clock::time_point next = now + std::chrono::milliseconds(250);
      for (auto it = connections.begin(); it != connections.end();) {
        Connection& c = it->second;
        if (c.phase != Connection::Phase::computing && now >= c.deadline) {
          if (c.phase == Connection::Phase::reading) answer_and_close(c, 408, late_message);
          else
            ::close(c.fd);
          it = connections.erase(it);
          continue;
        }
        if (c.phase != Connection::Phase::computing) next = std::min(next, c.deadline);
        ++it;
      }
      fds.clear();
      polled.clear();
      fds.push_back({listen_fd, POLLIN, 0});
      fds.push_back({wake_fd, POLLIN, 0});
      for (auto it = connections.begin(); it != connections.end(); ++it) {
        const Connection::Phase phase = it->second.phase;
        if (phase == Connection::Phase::computing) continue;
        fds.push_back({it->second.fd, static_cast<short>(phase == Connection::Phase::writing ? POLLOUT : POLLIN), 0});
        polled.push_back(it);
      }
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count();
      const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait, 0) + 1));
      if (ready < 0) {
        if (errno == EINTR) continue;
        throw IoError(std::string("the server cannot wait on its connections: ") + std::strerror(errno));
      }
      if (fds[1].revents != 0) {
        uint64_t count = 0;
        const ssize_t n = ::read(wake_fd, &count, sizeof count);
        (void)n;
      }
      for (size_t i = 0; i < polled.size(); ++i) {
        const short events = fds[i + 2].revents;
        if (events == 0) continue;
        auto it = polled[i];
        Connection& c = it->second;
        bool close_it = false;
        if (c.phase == Connection::Phase::writing) close_it = (events & (POLLERR | POLLHUP)) ? true : on_writable(c);
        else close_it = on_readable(it->first, c, pool);
        if (!close_it && c.phase == Connection::Phase::writing) close_it = on_writable(c);  // answered at once
        if (close_it) {
          ::close(c.fd);
          connections.erase(it);
        }
      }
      if (fds[0].revents != 0) accept_new(pool);
    }
  }
};

Server::Server(ServerOptions options, ServedModel& served, const ProbeSet& probes, std::vector<RunWatch*> runs)
    : impl_(std::make_unique<Impl>(std::move(options), served, probes, std::move(runs))) {}

Server::~Server() = default;

int Server::bind() {
  const std::string& host = impl_->options.host;
  const int port = impl_->options.port;
  auto refuse = [&] {
    return InputError("cannot listen on " + host + ":" + std::to_string(port) +
                      " (the port is in use, or the address is not this machine's): give another --port or --host");
  };
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) throw refuse();
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    // SO_REUSEADDR alone, not SO_REUSEPORT, which would let a second server (or any
    // process) bind the same port and take its connections: a port in use is an error.
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) throw refuse();
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  impl_->port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                   : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  impl_->listen_fd = fd;
  return impl_->port;
}

void Server::serve() {
  Impl& impl = *impl_;
  WorkerPool pool(static_cast<size_t>(impl.options.workers), static_cast<size_t>(impl.options.queue), impl.wake_fd,
                  [&impl](const HttpRequest& req) { return impl.answer(req); });
  impl.loop(pool);
  pool.shutdown();
}

void Server::stop() {
  impl_->stopping.store(true);
  const uint64_t one = 1;
  const ssize_t n = ::write(impl_->wake_fd, &one, sizeof one);
  (void)n;
}

}  // namespace mg::serve
