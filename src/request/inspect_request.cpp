// inspect-heads' options and their one parser (request/inspect_request.h).
#include "request/inspect_request.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

namespace mg {
namespace {

// An index's bounds as a number: a negative one is read, so that the mode refuses it with
// the range the model or the text gives ("layer -1 is out of range: ..., valid 0..3").
constexpr int64_t kMaxIndex = int64_t{1} << 20;

bool all_digits(const std::string& text, size_t from) {
  if (from >= text.size()) return false;
  return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(from), text.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

uint64_t seed(const std::string& name, const std::string& value) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (!all_digits(value, 0) || ec != std::errc() || end != value.data() + value.size())
    throw ArgumentError(name, ": must be an integer in [0, 2^64 - 1 = 18446744073709551615], found \"" +
                                  error_text(value) + "\"");
  return v;
}

double number(const std::string& name, const std::string& value) {
  double v = 0.0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v))
    throw ArgumentError(name, ": must be a finite number, found \"" + error_text(value) + "\"");
  return v;
}

double fraction(const std::string& name, const std::string& value) {
  const double v = number(name, value);
  if (v < 0.0 || v > 1.0) throw ArgumentError(name, ": must be a number in [0, 1], found \"" + error_text(value) + "\"");
  return v;
}

bool flag(const std::string& name, const std::string& value) {
  if (value.empty() || value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  throw ArgumentError(name, ": must be 1, true, 0 or false, found \"" + error_text(value) + "\"");
}

std::string choice(const InspectOption& o, const std::string& value) {
  if (std::find(o.choices.begin(), o.choices.end(), value) != o.choices.end()) return value;
  std::string known;
  for (const std::string& c : o.choices) known += (known.empty() ? "" : " or ") + c;
  throw ArgumentError(o.name, ": must be " + known + ", found \"" + error_text(value) + "\"");
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

using Kind = OptionKind;

}  // namespace

const std::vector<InspectOption>& inspect_options() {
  static const std::vector<InspectOption> options = {
      {"checkpoint", Kind::file, "Checkpoint (.safetensors) of a trained model", 0, 0, {}, false},
      {"config", Kind::file,
       "Instead of a checkpoint: a config whose model is freshly initialised (before training); the vocabulary comes "
       "from its corpus",
       0, 0, {}, false},
      {"seed", Kind::seed, "With --config: the initialisation seed (default: the config's train.seed)", 0, 0, {}, false},
      {"text", Kind::text,
       "The text to read (at most block_size symbols); needed except with --roles, --circuits, --composition and "
       "--patch"},
      {"layer", Kind::integer, "Only this layer (0-based)", -kMaxIndex, kMaxIndex},
      {"head", Kind::integer, "Only this head (0-based) of each layer", -kMaxIndex, kMaxIndex},
      {"format", Kind::choice, "table (default) or json (docs/cli.md)", 0, 0, {"table", "json"}},
      {"position", Kind::integer, "Only the query row of this position (0-based): each key symbol and its weight",
       -kMaxIndex, kMaxIndex},
      {"weights", Kind::flag, "Also print each head's slices of Wq, Wk, Wv (rows) and Wo (columns)"},
      {"svg", Kind::file,
       "Also write the heatmaps (layers x heads) to this SVG file (atomically; only a regular file is replaced)", 0, 0,
       {}, false},
      {"trace", Kind::text,
       "L.H: the worked trace of head H of layer L at --position P, every step of the formula with its numbers"},
      {"roles", Kind::flag,
       "Each head's role scores (previous-token, offset, current-token, first position, induction, answer-finding, "
       "copy-forward; the last two also per question kind), its role (writer, carrier, ...) and its probe-accuracy drop "
       "when ablated, overall and per kind"},
      {"probe", Kind::file,
       "Probe set for --roles (default: the config's data.probe_path), --attribution, --patch and --circuit (per question "
       "kind)", 0,
       0, {}, false},
      {"text_file", Kind::file, "With --roles: score patterns on this file's block_size windows instead of the probe prompts",
       0, 0, {}, false},
      {"mean_ablation", Kind::flag,
       "With --roles: replace an ablated head's output by its mean over the probe prompts, not by zero", 0, 0, {}, false},
      {"circuits", Kind::flag,
       "The QK and OV circuits of --layer L --head H in the symbol basis (top pairs; --svg draws both V x V tables)"},
      {"compare", Kind::pair,
       "A.safetensors B.safetensors: match A's heads to B's by their attention patterns (on --text, else the probe "
       "prompts) and print the pairs with their roles and similarity",
       0, 0, {}, false},
      {"html", Kind::file,
       "Write the head explorer to this file: one self-contained HTML page with every head's weights, roles, ablation "
       "cost, traces and circuits (atomically; only a regular file is replaced)",
       0, 0, {}, false},
      {"run", Kind::file,
       "With --html: also draw this run directory's metrics.jsonl (loss, probe accuracy, head roles when present); with "
       "--timeline: the run whose events to find",
       0, 0, {}, false},
      {"replay", Kind::flag,
       "With --html and --run DIR: a step slider over the models DIR/evals/ kept at each evaluation; moving it redraws "
       "the page's heads, next symbol, attribution and roles at that evaluation (the chain at the formation events' "
       "evaluations and the last), with the run's curves under it and its events marked",
       0, 0, {}, false},
      {"timeline", Kind::flag,
       "With --run DIR: the run's formation events (accuracy crossing 0.5 and 0.95, role jumps, loss bumps and plateaus, "
       "the schedule's steps), the heads that changed most across each and the chain --explain finds on the models kept "
       "before and after (DIR/evals/)"},
      {"top", Kind::integer,
       "How many pairs (--circuits, --composition), output symbols (--trace, --logit-lens), rows (--patch), kept edges "
       "per kind (--circuit) or source pairs per key (--score-split) to list (default 10)",
       1, 10000},
      {"attribution", Kind::flag,
       "Direct logit attribution at --position P of --text: each part of the final residual stream (embeddings, each "
       "head, each MLP, ln_f's bias) and its share of the answer's logit and of the difference against --against (with "
       "--probe FILE: the mean per question kind)"},
      {"logit_lens", Kind::flag,
       "The residual stream at --position P of --text after each block, read through ln_f and the head: the top symbols "
       "and the answer's rank"},
      {"composition", Kind::flag,
       "Q-, K- and V-composition scores of every earlier head with every later head, beside the mean of random matrices "
       "of the same shapes"},
      {"patch", Kind::flag,
       "Activation patching: run --corrupt with one activation from --clean (each head's output, the stream at each "
       "layer and position) and print the fraction of the logit difference restored (with --probe FILE: per kind, each "
       "item's fact swapped)"},
      {"answer", Kind::text,
       "With --attribution, --logit-lens, --patch, --next-symbol: the answer symbol (default: the model's choice)"},
      {"against", Kind::text,
       "With --attribution, --patch, --next-symbol: the competing symbol (default: the best other symbol; with --patch "
       "the corrupt run's choice)"},
      {"clean", Kind::text, "With --patch: the clean text"},
      {"corrupt", Kind::text, "With --patch: the corrupt text, as long as --clean"},
      {"swap", Kind::choice,
       "With --patch --probe and --circuit: what each item's corrupt prompt changes in the answer's fact: value (default; the answer "
       "symbol, for the head that writes it) or key (every symbol the question could match the fact on, for the head "
       "that carries it to the answer)",
       0, 0, {"value", "key"}, false},
      {"explain", Kind::flag,
       "Each question kind's chain, found on --probe FILE (default: the config's data.probe_path): the head that writes "
       "the answer, the earlier head that carries the key to it, the MLPs' part, with the numbers of --attribution, "
       "--patch --swap value|key and --composition that chose them"},
      {"circuit", Kind::flag,
       "Each question kind's circuit on --probe FILE (default: the config's data.probe_path): the edges between the "
       "embeddings, each head's q, k and v inputs and output, each MLP and the logits that path patching keeps (ACDC, "
       "--threshold), with its faithfulness, completeness, minimality and EAP's estimates"},
      {"threshold", Kind::fraction,
       "With --circuit: ACDC's tau, the change of faithfulness under which an edge is removed (default 0.01)", 0, 0, {},
       false},
      {"score_split", Kind::text,
       "L.H: head H of layer L's attention score at --position P of --text on each key, split into query-side source x "
       "key-side source (embeddings, each earlier head, each earlier MLP, ln1's bias)"},
      {"next_symbol", Kind::flag,
       "The next-symbol distribution at --position P of --text (default: the last), as `sample` draws from it with "
       "--temperature, --top-k and --top-p, with --ablate's heads zeroed, and the logit difference of --answer against "
       "--against"},
      {"temperature", Kind::number, "With --next-symbol: the sampling temperature (default 1; 0: all on the arg-max)"},
      {"top_k", Kind::integer, "With --next-symbol: keep the k most likely symbols (default 0: all)", 0, kMaxIndex},
      {"top_p", Kind::number, "With --next-symbol: keep the smallest set whose probability reaches p (default 1)"},
      {"ablate", Kind::text, "With --next-symbol: heads zeroed, L.H separated by commas (\"0.1,1.0\")"},
  };
  return options;
}

const InspectOption* find_inspect_option(const std::string& name) {
  for (const InspectOption& o : inspect_options())
    if (name == o.name) return &o;
  return nullptr;
}

InspectRequest parse_inspect_request(const Arguments& args) {
  InspectRequest r;
  std::map<std::string, int> seen;
  for (const auto& [name, value] : args) {
    const InspectOption* o = find_inspect_option(name);
    if (!o) throw RequestError({ArgumentName{name}, " is no option of inspect-heads"});
    // A flag may be repeated (the last says), as CLI11 lets it be; a value may not.
    if (++seen[name] > (o->kind == Kind::pair ? 2 : 1) && o->kind != Kind::flag)
      throw RequestError({ArgumentName{name}, " is given twice"});
    // Each option into its field; the modes' own flags are the mode table's.
    if (name == "checkpoint") r.checkpoint = value;
    else if (name == "config") r.config = value;
    else if (name == "seed") r.seed = seed(name, value);
    else if (name == "text") r.text = value;
    else if (name == "layer") r.layer = integer_argument(name, value, o->lo, o->hi);
    else if (name == "head") r.head = integer_argument(name, value, o->lo, o->hi);
    else if (name == "position") r.position = integer_argument(name, value, o->lo, o->hi);
    else if (name == "weights") r.weights = flag(name, value);
    else if (name == "format") r.format = choice(*o, value);
    else if (name == "svg") r.svg = value;
    else if (name == "html") r.html = value;
    else if (name == "run") r.run = value;
    else if (name == "probe") r.probe = value;
    else if (name == "text_file") r.text_file = value;
    else if (name == "trace") r.trace = value;
    else if (name == "answer") r.answer = value;
    else if (name == "against") r.against = value;
    else if (name == "clean") r.clean = value;
    else if (name == "corrupt") r.corrupt = value;
    else if (name == "swap") r.swap = choice(*o, value);
    else if (name == "compare") r.compare.push_back(value);
    else if (name == "mean_ablation") r.mean_ablation = flag(name, value);
    else if (name == "replay") r.replay = flag(name, value);
    else if (name == "top") r.top = integer_argument(name, value, o->lo, o->hi);
    else if (name == "temperature") r.sampling.temperature = number(name, value);
    else if (name == "top_k") r.sampling.top_k = integer_argument(name, value, o->lo, o->hi);
    else if (name == "top_p") r.sampling.top_p = number(name, value);
    else if (name == "ablate") r.ablate = head_list(value);
    else if (name == "threshold") r.threshold = fraction(name, value);
    else if (name == "score_split") r.score_split = value;
    else if (o->kind == Kind::flag) flag(name, value);  // a mode's own flag: its value checked only
  }
  if (!r.compare.empty() && r.compare.size() != 2)
    throw RequestError({ArgumentName{"compare"}, " needs two checkpoints, A and B"});
  return r;
}

}  // namespace mg
