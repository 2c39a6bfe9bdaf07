// run= and step= of a request (serve/model_choice.h).
#include "serve/model_choice.h"

#include <optional>

#include "core/error.h"
#include "report/text.h"
#include "request/arguments.h"

namespace mg::serve {

namespace {

// F() with the request layer's errors (take_argument's, integer_argument's: each naming the
// query key) as a 400.
template <class F>
auto read_argument(F f) {
  try {
    return f();
  } catch (const InputError& e) {
    throw ChoiceRefused{400, request_error_message(e, Spelling::query)};
  }
}

}  // namespace

ModelChoice choose_model(QueryParams& params, ServedModel& served, const ProbeSet& probes,
                         const std::vector<RunWatch*>& runs) {
  const std::optional<std::string> run = read_argument([&] { return take_argument(params, "run"); });
  const std::optional<std::string> step = read_argument([&] { return take_argument(params, "step"); });
  ModelChoice choice;
  if (run) {
    if (runs.empty()) throw ChoiceRefused{400, "run: no run is watched (start serve with --run DIR)"};
    choice.run_index = static_cast<size_t>(
        read_argument([&] { return integer_argument("run", *run, 0, static_cast<int64_t>(runs.size()) - 1); }));
  }
  choice.run = runs.empty() ? nullptr : runs[choice.run_index];
  choice.model = choice.run ? choice.run->served().current() : served.current();
  choice.probes = choice.run ? &choice.run->probes() : &probes;
  if (step) {
    if (!choice.run) throw ChoiceRefused{400, "step: no run is watched, so no evaluation is kept (start serve with --run DIR)"};
    const int64_t at = read_argument([&] { return integer_argument("step", *step, 0, kMaxStepCount); });
    try {
      choice.model = choice.run->snapshot_at(at);
    } catch (const InputError& e) {
      throw ChoiceRefused{404, e.what()};
    }
  }
  return choice;
}

std::string runs_side_by_side_page(const std::vector<RunWatch*>& runs) {
  std::string frames;
  for (size_t i = 0; i < runs.size(); ++i)
    frames += "<iframe id=\"run-frame-" + std::to_string(i) + "\" src=\"/?run=" + std::to_string(i) + "\" title=\"" +
              xml_escape(runs[i]->dir().string()) + "\"></iframe>\n";
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<link rel=\"icon\" href=\"data:,\">\n"
         "<title>mini-gpt live: " + std::to_string(runs.size()) + " runs</title>\n"
         "<style>body{margin:0;display:flex;height:100vh}iframe{flex:1;border:0;border-right:1px solid #ccc;"
         "min-width:0;height:100%}</style>\n</head>\n<body>\n" + frames + "</body>\n</html>\n";
}

}  // namespace mg::serve
