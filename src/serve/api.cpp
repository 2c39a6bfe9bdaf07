// GET /api/MODE: the query's options into inspect-heads' request, its JSON back (serve/api.h).
#include "serve/api.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <map>
#include <new>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/utf8.h"
#include "interp/ablation.h"
#include "interp/circuit_edges.h"
#include "report/edge_circuit_format.h"
#include "report/inspect_json.h"
#include "serve/next_symbol.h"

namespace mg::serve {
namespace {

// The options each mode reads, as inspect-heads' table (cli/inspect_modes.cpp) gives them
// to the mode, less those that name a file; "format" (json only) is read by every mode.
const std::map<std::string, std::vector<std::string>>& mode_options() {
  static const std::map<std::string, std::vector<std::string>> modes = {
      {"patterns", {"text", "layer", "head", "position", "weights"}},
      {"trace", {"trace", "text", "position", "top"}},
      {"attribution", {"text", "position", "answer", "against"}},
      {"logit-lens", {"text", "position", "answer", "top"}},
      {"patch", {"clean", "corrupt", "answer", "against", "top"}},
      {"composition", {"top"}},
      {"roles", {}},
      {"circuit", {}},
      {"next", {"text", "position", "temperature", "top_k", "ablate", "answer", "against"}},
  };
  return modes;
}

// Options of inspect-heads that name a file: the server reads none a request names.
const std::vector<std::string> kFileOptions = {"checkpoint", "config", "html", "svg", "run", "probe", "text_file",
                                               "text-file", "compare"};

struct BadRequest {
  std::string message;
};

int64_t integer(const std::string& name, const std::string& value, int64_t lo, int64_t hi) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < lo || v > hi)
    throw BadRequest{name + ": must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], found \"" +
                     error_text(value) + "\""};
  return v;
}

double number(const std::string& name, const std::string& value) {
  double v = 0.0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v))
    throw BadRequest{name + ": must be a finite number, found \"" + error_text(value) + "\""};
  return v;
}

bool flag(const std::string& name, const std::string& value) {
  if (value.empty() || value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  throw BadRequest{name + ": must be 1, true, 0 or false, found \"" + error_text(value) + "\""};
}

// "1.0,2.1" -> {"1.0", "2.1"}; an empty value ablates nothing.
std::vector<std::string> head_list(const std::string& value) {
  std::vector<std::string> heads;
  size_t start = 0;
  while (start <= value.size() && !value.empty()) {
    const size_t comma = std::min(value.find(',', start), value.size());
    heads.push_back(value.substr(start, comma - start));
    start = comma + 1;
  }
  return heads;
}

// The query's options, each checked against what MODE reads; a repeat is refused.
std::map<std::string, std::string> mode_params(const std::string& mode, const QueryParams& params) {
  const std::vector<std::string>& reads = mode_options().at(mode);
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : params) {
    if (std::find(kFileOptions.begin(), kFileOptions.end(), name) != kFileOptions.end())
      throw BadRequest{name + " names a file: the server reads only the files named when it started"};
    if (name == "format") {
      if (value != "json") throw BadRequest{"format: the server answers json only"};
      continue;
    }
    if (std::find(reads.begin(), reads.end(), name) == reads.end()) {
      std::string known;
      for (const std::string& r : reads) known += (known.empty() ? "" : ", ") + r;
      throw BadRequest{"/api/" + mode + " does not read \"" + error_text(name) + "\"" +
                       (known.empty() ? " (it reads no option)" : " (it reads " + known + ")")};
    }
    if (!out.emplace(name, value).second) throw BadRequest{name + " is given twice"};
  }
  return out;
}

InspectRequest inspect_request(const std::map<std::string, std::string>& p) {
  InspectRequest r;
  auto has = [&](const char* name) { return p.count(name) > 0; };
  if (has("text")) {
    r.text = p.at("text");
    r.text_given = true;
  }
  if (has("layer")) r.layer = integer("layer", p.at("layer"), 0, 1 << 20);
  if (has("head")) r.head = integer("head", p.at("head"), 0, 1 << 20);
  if (has("position")) r.position = integer("position", p.at("position"), 0, 1 << 20);
  if (has("weights")) r.weights = flag("weights", p.at("weights"));
  if (has("trace")) r.trace = p.at("trace");
  if (has("top")) r.top = integer("top", p.at("top"), 1, 10000);  // as --top
  for (const char* name : {"answer", "against", "clean", "corrupt"})
    if (has(name)) {
      std::optional<std::string>& field = std::string(name) == "answer"    ? r.answer
                                          : std::string(name) == "against" ? r.against
                                          : std::string(name) == "clean"   ? r.clean
                                                                           : r.corrupt;
      field = p.at(name);
    }
  return r;
}

std::string next_json(const std::map<std::string, std::string>& p, const ModelSnapshot& s) {
  if (!p.count("text")) throw BadRequest{"/api/next needs text"};
  NextSymbolQuery q;
  if (p.count("position")) q.position = integer("position", p.at("position"), 0, 1 << 20);
  if (p.count("temperature")) q.temperature = number("temperature", p.at("temperature"));
  if (p.count("top_k")) q.top_k = integer("top_k", p.at("top_k"), 0, 1 << 20);
  if (p.count("ablate")) q.ablate = head_list(p.at("ablate"));
  if (p.count("answer")) q.answer = p.at("answer");
  if (p.count("against")) q.against = p.at("against");
  const std::u32string text = decode_utf8(p.at("text"), "text");
  return next_symbols_json(next_symbols(s.model, s.vocab, text, q), s.vocab).dump() + "\n";
}

std::string mode_json(const std::string& mode, const std::map<std::string, std::string>& p, const ModelSnapshot& s) {
  const InspectModel m{s.model, s.vocab};
  if (mode == "next") return next_json(p, s);
  if (mode == "composition") return s.composition_json;
  if (mode == "roles") {
    if (s.roles_json.empty())
      throw BadRequest{"no probe set: roles are scored on one (start serve with --probe FILE, or a checkpoint whose "
                       "config names data.probe_path)"};
    return s.roles_json;
  }
  if (mode == "circuit") {  // inspect-heads --circuit --probe FILE --format json, at its default threshold
    if (s.probe_items.empty())
      throw BadRequest{"no probe set: the circuit is found on its pairs (start serve with --probe FILE, or a checkpoint "
                       "whose config names data.probe_path)"};
    return s.circuit_json->get([&] {
      return edge_circuits_json(find_probe_circuits(s.model, s.vocab, s.probe_items, CircuitOptions{})).dump() + "\n";
    });
  }
  const InspectRequest r = inspect_request(p);
  if (mode == "patterns") {
    if (s.pattern_roles) return patterns_json_text(r, m, *s.pattern_roles);
    // No probe set: the roles are scored on the text alone, as inspect-heads does.
    const Inspection inspection = inspect_for(r, m);
    const RoleReport roles = probe_role_report(s.model, s.vocab, {}, "", inspection.text, false, false);
    return patterns_json_text(r, m, inspection, roles);
  }
  if (mode == "trace") return trace_json_text(r, m);
  if (mode == "attribution") return attribution_json_text(r, m);
  if (mode == "logit-lens") return logit_lens_json_text(r, m);
  return patch_json_text(r, m);  // "patch"
}

// An option named in an error the command line's way ("--text") is named the query's way
// ("text"); the server has no dashes.
std::string query_names(std::string message) {
  for (size_t at = message.find("--"); at != std::string::npos; at = message.find("--", at + 1)) {
    const bool starts_word = at == 0 || message[at - 1] == ' ' || message[at - 1] == '(';
    if (starts_word && at + 2 < message.size() && std::islower(static_cast<unsigned char>(message[at + 2])))
      message.erase(at, 2);
  }
  return message;
}

}  // namespace

const std::vector<std::string>& api_modes() {
  static const std::vector<std::string> modes = [] {
    std::vector<std::string> out;
    for (const auto& [mode, reads] : mode_options()) out.push_back(mode);
    return out;
  }();
  return modes;
}

// Every error the server answers goes through here, so each is shown as the command line
// shows it (core/error.h's error_text): control characters, U+2028, U+2029, the
// bidirectional overrides and bytes that are not UTF-8 as '?', long values cut.
std::string error_json(const std::string& message) {
  return nlohmann::json{{"error", error_text(message)}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

ApiAnswer answer_api(const std::string& mode, const QueryParams& params, const ModelSnapshot& model) {
  if (!mode_options().count(mode))
    return {404, error_json("no such endpoint: /api/" + error_text(mode) + " (the modes: patterns, trace, attribution, "
                            "logit-lens, patch, composition, roles, circuit, next)")};
  try {
    return {200, mode_json(mode, mode_params(mode, params), model)};
  } catch (const BadRequest& e) {
    return {400, error_json(e.message)};
  } catch (const InputError& e) {  // ArgumentError too: the text, a position, a symbol
    return {400, error_json(query_names(e.what()))};
  } catch (const std::bad_alloc&) {
    return {500, error_json("out of memory")};
  } catch (const std::exception& e) {
    return {500, error_json(std::string("internal error: ") + e.what())};
  }
}

}  // namespace mg::serve
