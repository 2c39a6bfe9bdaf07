// GET /api/MODE: the query's options into inspect-heads' request, its JSON back (serve/api.h).
// The modes, the options each reads and their parser are the request layer's
// (request/inspect_modes.h): the server only reads the query into its arguments.
#include "serve/api.h"

#include <new>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "request/arguments.h"
#include "request/inspect_modes.h"
#include "request/inspect_request.h"

namespace mg::serve {
// Every error the server answers goes through here, so each is shown as the command line
// shows it (core/error.h's error_text): control characters, U+2028, U+2029, the
// bidirectional overrides and bytes that are not UTF-8 as '?', long values cut.
std::string error_json(const std::string& message) {
  return nlohmann::json{{"error", error_text(message)}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
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
