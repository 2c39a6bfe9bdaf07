// GET /api/MODE: the query's options into inspect-heads' request, its JSON back (serve/api.h).
// The modes, the options each reads and their parser are the request layer's
// (request/inspect_modes.h): the server only reads the query into its arguments.
#include "serve/api.h"

#include <algorithm>
#include <new>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/utf8.h"
#include "request/arguments.h"
#include "request/inspect_modes.h"
#include "request/inspect_request.h"
#include "serve/next_symbol.h"

namespace mg::serve {
namespace {

// The next-symbol distribution's options (serve/next_symbol.h).
const std::vector<std::string> kNextOptions = {"text", "position", "temperature", "top_k", "ablate", "answer", "against"};

std::string next_json(const QueryParams& params, const ModelSnapshot& s) {
  for (const auto& [name, value] : params) {
    const InspectOption* o = find_inspect_option(name);
    if (o && (o->kind == OptionKind::file || o->kind == OptionKind::pair))
      throw RequestError({ArgumentName{name}, " names a file: the server reads only the files named when it started"});
    if (name == "format") {
      if (value != "json") throw RequestError({ArgumentName{"format"}, ": the server answers json only"});
      continue;
    }
    if (std::find(kNextOptions.begin(), kNextOptions.end(), name) == kNextOptions.end())
      throw RequestError({"/api/next does not read \"" + error_text(name) +
                          "\" (it reads text, position, temperature, top_k, ablate, answer, against)"});
  }
  const InspectRequest r = parse_inspect_request(params);
  if (!r.text) throw RequestError({"/api/next needs text"});
  NextSymbolQuery q;
  q.position = r.position;
  q.temperature = r.sampling.temperature;
  q.top_k = r.sampling.top_k;
  q.ablate = r.ablate;
  q.answer = r.answer;
  q.against = r.against;
  std::u32string text;
  try {
    text = decode_utf8(*r.text, "text");
  } catch (const InputError& e) {
    throw ArgumentError("text", std::string(e.what()).substr(4));
  }
  return next_symbols_json(next_symbols(s.model, s.vocab, text, q), s.vocab).dump() + "\n";
}

}  // namespace

// Every error the server answers goes through here, so each is shown as the command line
// shows it (core/error.h's error_text): control characters, U+2028, U+2029, the
// bidirectional overrides and bytes that are not UTF-8 as '?', long values cut.
std::string error_json(const std::string& message) {
  return nlohmann::json{{"error", error_text(message)}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

ApiAnswer answer_api(const std::string& api, const QueryParams& params, const ModelSnapshot& model) {
  const InspectMode* mode = served_mode(api);
  if (!mode && api != "next")
    return {404, error_json("no such endpoint: /api/" + error_text(api) + " (the modes: " + served_modes_list() + ", next)")};
  try {
    if (!mode) return {200, next_json(params, model)};
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
