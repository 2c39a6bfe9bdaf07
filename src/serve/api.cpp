// GET /api/MODE: the query's options into inspect-heads' request, its JSON back (serve/api.h).
// The modes, the options each reads and their parser are the request layer's
// (request/inspect_modes.h): the server only reads the query into its arguments.
#include "serve/api.h"

#include <new>
#include <regex>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "request/arguments.h"
#include "request/inspect_modes.h"
#include "request/inspect_request.h"

namespace mg::serve {

namespace {

// The stable code of an error the pages word in their language (words.js serverError), and
// its numbers, from the fixed phrase each error's one writer puts in it (server.cpp's
// refusals, interp's text checks, data/vocab.cpp's unknown symbol, run_watch.cpp's step not
// kept); "" for any other, which
// a page shows by its HTTP status and the English message. docs/cli.md lists the codes.
nlohmann::json error_code(const std::string& message) {
  using nlohmann::json;
  static const std::regex unknown_symbol(R"(: symbol .* at position (\d+) is not in the vocabulary of (\d+) symbols)");
  static const std::regex step_not_kept(R"(^step (\d+): .* kept no model at that step)");
  static const std::regex too_long(R"( has (\d+) symbols, more than the model's block_size of (\d+))");
  const auto starts = [&](const char* phrase) { return message.rfind(phrase, 0) == 0; };
  const auto has = [&](const char* phrase) { return message.find(phrase) != std::string::npos; };
  std::smatch m;
  if (std::regex_search(message, m, unknown_symbol))
    return {{"code", "unknown_symbol"}, {"position", std::stoll(m[1])}, {"vocab_size", std::stoll(m[2])}};
  if (std::regex_search(message, m, too_long))
    return {{"code", "too_long"}, {"length", std::stoll(m[1])}, {"block_size", std::stoll(m[2])}};
  if (has(" is empty: give at least one symbol")) return {{"code", "empty_text"}};
  if (starts("no model yet")) return {{"code", "no_model"}};
  if (starts("busy: ")) return {{"code", "busy"}};
  if (starts("no probe set")) return {{"code", "no_probe"}};
  if (has("no run is watched")) return {{"code", "no_run"}};  // also "run: ..." and "step: ..."
  if (std::regex_search(message, m, step_not_kept)) return {{"code", "step_not_kept"}, {"step", std::stoll(m[1])}};
  if (starts("no such endpoint") || starts("no such path")) return {{"code", "not_found"}};
  if (starts("out of memory")) return {{"code", "out_of_memory"}};
  if (starts("internal error")) return {{"code", "internal"}};
  return {{"code", ""}};
}

}  // namespace

// Every error the server answers goes through here, so each is shown as the command line
// shows it (core/error.h's error_text): control characters, U+2028, U+2029, the
// bidirectional overrides and bytes that are not UTF-8 as '?', long values cut. Beside the
// English "error", "code" (and its numbers) lets a page say it in its own language.
std::string error_json(const std::string& message) {
  nlohmann::json body = {{"error", error_text(message)}};
  body.update(error_code(message));
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

ApiAnswer answer_api(const std::string& api, const QueryParams& params, const ModelSnapshot& model) {
  const InspectMode* mode = served_mode(api);
  if (!mode) return {404, error_json("no such endpoint: /api/" + error_text(api) + " (the modes: " + served_modes_list() + ")")};
  try {
    check_served_arguments(*mode, params);
    InspectRequest request = parse_inspect_request(params);
    request.format = "json";
    if (mode->check) mode->check(request);
    const Subject subject{&model.model, &model.vocab, "", "", &model.cache};
    return {200, mode->run(request, subject).text};
  } catch (const InputError& e) {  // RequestError and ArgumentError too: the text, a position, a symbol
    return {400, error_json(request_error_message(e, Spelling::query))};
  } catch (const std::bad_alloc&) {
    return {500, error_json("out of memory")};
  } catch (const std::exception& e) {
    return {500, error_json(std::string("internal error: ") + e.what())};
  }
}

}  // namespace mg::serve
