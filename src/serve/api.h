// The server's JSON endpoints, GET /api/MODE?OPTION=VALUE&...: MODE an inspect-heads mode
// (patterns, the default view; trace, attribution, logit-lens, patch, composition, roles,
// explain)
// answered with exactly what `inspect-heads --format json` prints for the same options
// (report/inspect_json.h computes both), and next, the next-symbol distribution
// (serve/next_symbol.h). The options are the command line's names without the dashes.
// Nothing here knows HTTP: the server hands over the decoded query, this answers a status
// and a body.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "serve/served_model.h"

namespace mg::serve {

using QueryParams = std::vector<std::pair<std::string, std::string>>;  // decoded, in order

struct ApiAnswer {
  int status = 200;
  std::string body;  // JSON; on an error {"error": "..."}
};

// The answer to GET /api/MODE with PARAMS on MODEL: 200 and the JSON; 404 for a MODE that
// is none of the above; 400 for an option the mode does not read, one given twice, one
// that names a file (checkpoint, config, html, svg, probe, text_file, compare: the
// server reads only the files named when it started), a value out of range or a text the
// model cannot read. Never throws for any request.
ApiAnswer answer_api(const std::string& mode, const QueryParams& params, const ModelSnapshot& model);

// The modes answer_api knows, for the page and the docs.
const std::vector<std::string>& api_modes();

// {"error": MESSAGE}.
std::string error_json(const std::string& message);

}  // namespace mg::serve
