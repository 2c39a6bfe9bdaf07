// The HTTP server of `mini-gpt serve` (serve/server.h): cpp-httplib's Server with a bounded
// pool of workers, the checks every request passes, and the routes.
#include "serve/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "kernels/runtime.h"
#include "live_assets.h"  // generated from src/serve/page/ at build time
#include "report/explorer.h"
#include "serve/api.h"

namespace mg::serve {
namespace {

// Set on the thread that answers connections beyond the queue: every request on it is
// answered 429 without any work.
thread_local bool t_refusing = false;

// httplib's task queue, bounded: WORKERS threads take connections in turn, at most CAPACITY
// wait, and a connection beyond them goes to one more thread that only refuses (httplib
// 0.11's enqueue cannot refuse a connection itself). Each worker computes on one core.
class BoundedPool : public httplib::TaskQueue {
 public:
  BoundedPool(size_t workers, size_t capacity) : state_(std::make_shared<State>()) {
    state_->capacity = capacity;
    for (size_t i = 0; i <= workers; ++i) {
      const bool refusing = i == workers;  // the last thread only refuses
      threads_.emplace_back([state = state_, refusing] { run(*state, refusing); });
    }
  }
  ~BoundedPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard lock(state_->mutex);
      (state_->jobs.size() < state_->capacity ? state_->jobs : state_->overflow).push_back(std::move(fn));
    }
    state_->ready.notify_all();
  }

  // Called when the server stops: the workers finish what they hold, for at most about
  // half a second (a browser's idle pre-connection can hold one until its read timeout);
  // one still busy then is left to end with the process (it holds the state it shares).
  void shutdown() override {
    {
      std::lock_guard lock(state_->mutex);
      if (state_->stopping) return;
      state_->stopping = true;
      state_->jobs.clear();
      state_->overflow.clear();
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
  struct State {
    size_t capacity = 0;
    std::mutex mutex;
    std::condition_variable ready, finished_cv;
    std::deque<std::function<void()>> jobs, overflow;
    size_t finished = 0;
    bool stopping = false;
  };

  static void run(State& state, bool refusing) {
    t_refusing = refusing;
    set_num_threads(1);  // omp_set_num_threads is per thread: this one's kernels on one core
    std::deque<std::function<void()>>& queue = refusing ? state.overflow : state.jobs;
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock lock(state.mutex);
        state.ready.wait(lock, [&] { return state.stopping || !queue.empty(); });
        if (state.stopping) break;
        fn = std::move(queue.front());
        queue.pop_front();
      }
      fn();
    }
    std::lock_guard lock(state.mutex);
    ++state.finished;
    state.finished_cv.notify_all();
  }

  std::shared_ptr<State> state_;
  std::vector<std::thread> threads_;
};

constexpr const char* kJson = "application/json; charset=utf-8";

void send_json(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, kJson);
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, error_json(message));
}

std::string model_info(const ModelSnapshot& s, const ProbeSet& probes, const ServerOptions& options, bool run) {
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
  return page;
}

struct Server::Impl {
  ServerOptions options;
  ServedModel& served;
  const ProbeSet& probes;
  RunWatch* run;
  httplib::Server http;
  std::string page = live_page();
  int port = 0;

  Impl(ServerOptions o, ServedModel& s, const ProbeSet& p, RunWatch* r)
      : options(std::move(o)), served(s), probes(p), run(r) {}

  // The Host header a page of this server sends: the bound address, localhost or
  // 127.0.0.1, with the port. Anything else is another site's page reaching this port
  // through a name it controls (DNS rebinding).
  bool host_allowed(const std::string& host) const {
    const std::string suffix = ":" + std::to_string(port);
    for (const std::string& name : {options.host, std::string("localhost"), std::string("127.0.0.1")})
      if (host == name + suffix) return true;
    return false;
  }

  void routes() {
    const size_t workers = static_cast<size_t>(options.workers), queue = static_cast<size_t>(options.queue);
    http.new_task_queue = [workers, queue] { return new BoundedPool(workers, queue); };
    // SO_REUSEADDR alone: httplib's default, SO_REUSEPORT, would let a second server (or any
    // process) bind the same port and take its connections; this way a port in use is an error.
    http.set_socket_options([](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    http.set_keep_alive_max_count(1);  // a connection per request: an idle one never holds a worker
    http.set_read_timeout(5, 0);
    http.set_write_timeout(5, 0);
    http.set_payload_max_length(kMaxQueryBytes);  // a GET has no body; a larger one is refused (413)
    http.set_default_headers({{"Cache-Control", "no-store"}, {"X-Content-Type-Options", "nosniff"}});

    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (t_refusing) {
        send_error(res, 429, "busy: " + std::to_string(options.workers) + " requests computing and " +
                                 std::to_string(options.queue) + " waiting; try again");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (!host_allowed(req.get_header_value("Host"))) {
        send_error(res, 403, "the Host header must name this server (" + options.host + ":" + std::to_string(port) +
                                 ", localhost or 127.0.0.1 with the port), found \"" +
                                 error_text(req.get_header_value("Host")) + "\"");
        return httplib::Server::HandlerResponse::Handled;
      }
      const size_t question = req.target.find('?');
      const size_t query = question == std::string::npos ? 0 : req.target.size() - question - 1;
      if (query > kMaxQueryBytes) {
        send_error(res, 413, "the query string has " + std::to_string(query) + " bytes, more than the " +
                                 std::to_string(kMaxQueryBytes) + " the server reads");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });

    http.Get("/", [this](const httplib::Request&, httplib::Response& res) {
      res.set_header("Content-Security-Policy",
                     "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
                     "img-src data:");
      res.set_content(page, "text/html; charset=utf-8");
    });
    http.Get("/api/info", [this](const httplib::Request&, httplib::Response& res) {
      send_json(res, 200, model_info(*served.current(), probes, options, run != nullptr));
    });
    http.Get("/api/run", [this](const httplib::Request&, httplib::Response& res) {
      if (!run) return send_error(res, 404, "no run is watched: start serve with --run DIR");
      send_json(res, 200, run->status_json());
    });
    http.Get(R"(/api/([A-Za-z0-9_\-]*))", [this](const httplib::Request& req, httplib::Response& res) {
      QueryParams params(req.params.begin(), req.params.end());
      const ApiAnswer answer = answer_api(req.matches[1], params, *served.current());
      send_json(res, answer.status, answer.body);
    });
    auto not_allowed = [](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", "GET, HEAD");
      send_error(res, 405, req.method + " is not served: every endpoint answers GET");
    };
    http.Post(".*", not_allowed);
    http.Put(".*", not_allowed);
    http.Patch(".*", not_allowed);
    http.Delete(".*", not_allowed);
    http.Options(".*", not_allowed);

    // What httplib answers itself (no route, a request line or body too long, a request it
    // cannot parse) is JSON as well; a request line over its 8,192 bytes (414) counts as
    // a query over the limit (413).
    http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      if (res.status == 404) return send_error(res, 404, "no such path: " + error_text(req.path));
      if (res.status == 414)
        return send_error(res, 413, "the request line is longer than the 8,192 bytes the server reads");
      if (res.status == 413) return send_error(res, 413, "the request body is larger than the server reads");
      send_error(res, res.status, "bad request (HTTP " + std::to_string(res.status) + ")");
    });
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
      std::string what = "unknown";
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      send_error(res, 500, "internal error: " + what);
    });
  }
};

Server::Server(ServerOptions options, ServedModel& served, const ProbeSet& probes, RunWatch* run)
    : impl_(std::make_unique<Impl>(std::move(options), served, probes, run)) {
  impl_->routes();
}

Server::~Server() = default;

int Server::bind() {
  const std::string& host = impl_->options.host;
  const int port = impl_->options.port;
  const int bound = port == 0 ? impl_->http.bind_to_any_port(host) : (impl_->http.bind_to_port(host, port) ? port : -1);
  if (bound < 0)
    throw InputError("cannot listen on " + host + ":" + std::to_string(port) +
                     " (the port is in use, or the address is not this machine's): give another --port or --host");
  impl_->port = bound;
  return bound;
}

void Server::serve() { impl_->http.listen_after_bind(); }

void Server::stop() { impl_->http.stop(); }

}  // namespace mg::serve
