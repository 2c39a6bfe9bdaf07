// run= and step= of a request (serve/model_choice.h).
#include "serve/model_choice.h"

#include <charconv>
#include <optional>

#include "core/error.h"
#include "report/text.h"

namespace mg::serve {
namespace {

// The value of NAME in PARAMS, removed from them; refused when given twice.
std::optional<std::string> take(QueryParams& params, const char* name) {
  std::optional<std::string> value;
  for (auto it = params.begin(); it != params.end();) {
    if (it->first != name) {
      ++it;
      continue;
    }
    if (value) throw ChoiceRefused{400, std::string(name) + " is given twice"};
    value = it->second;
    it = params.erase(it);
  }
  return value;
}

int64_t whole_number(const char* name, const std::string& value, int64_t limit) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < 0 || v > limit)
    throw ChoiceRefused{400, std::string(name) + ": must be an integer in [0, " + std::to_string(limit) +
                                 "], found \"" + error_text(value) + "\""};
  return v;
}

}  // namespace

ModelChoice choose_model(QueryParams& params, ServedModel& served, const ProbeSet& probes,
                         const std::vector<RunWatch*>& runs) {
  const std::optional<std::string> run = take(params, "run"), step = take(params, "step");
  ModelChoice choice;
  if (run) {
    if (runs.empty()) throw ChoiceRefused{400, "run: no run is watched (start serve with --run DIR)"};
    choice.run_index = static_cast<size_t>(whole_number("run", *run, static_cast<int64_t>(runs.size()) - 1));
  }
  choice.run = runs.empty() ? nullptr : runs[choice.run_index];
  choice.model = choice.run ? choice.run->served().current() : served.current();
  choice.probes = choice.run ? &choice.run->probes() : &probes;
  if (step) {
    if (!choice.run) throw ChoiceRefused{400, "step: no run is watched, so no evaluation is kept (start serve with --run DIR)"};
    try {
      choice.model = choice.run->snapshot_at(whole_number("step", *step, kMaxStepCount));
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
