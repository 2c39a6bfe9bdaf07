// The run configuration (docs/config.md): one list of keys (for_each_key) drives
// reading, --set overrides, unknown-key suggestions and writing, so the four cannot
// disagree. Integer keys accept a JSON number only when it is integral (64 and 64.0 and
// 1e4 are fine, 64.5 is refused); number keys accept integers.
#include "io/config.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "data/text_file.h"
#include "data/utf8.h"
#include "data/json_limits.h"
#include "core/error.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A batch of more rows than this, or more validation batches, is a typo, not a plan
// (the memory estimate refuses most such batches anyway; eval_batches costs only time).
constexpr int64_t kMaxBatchSize = int64_t(1) << 20;
constexpr int64_t kMaxEvalBatches = 1'000'000;

// Calls visit(section, key, field) for every key, in docs/config.md's order; ConfigT may be const.
template <class ConfigT, class Visit>
void for_each_key(ConfigT& c, Visit&& visit) {
  visit("model", "vocab_size", c.model.vocab_size);
  visit("model", "n_layer", c.model.n_layer);
  visit("model", "n_embd", c.model.n_embd);
  visit("model", "n_head", c.model.n_head);
  visit("model", "block_size", c.model.block_size);
  visit("model", "position", c.model.position);
  visit("model", "rope_base", c.model.rope_base);
  visit("model", "mlp_ratio", c.model.mlp_ratio);
  visit("model", "dropout", c.model.dropout);
  visit("model", "norm_eps", c.model.norm_eps);
  visit("train", "batch_size", c.train.batch_size);
  visit("train", "max_steps", c.train.max_steps);
  visit("train", "lr", c.train.lr);
  visit("train", "min_lr", c.train.min_lr);
  visit("train", "warmup_steps", c.train.warmup_steps);
  visit("train", "freeze_block0_qk_to_step", c.train.freeze_block0_qk_to_step);
  visit("train", "weight_decay", c.train.weight_decay);
  visit("train", "beta1", c.train.beta1);
  visit("train", "beta2", c.train.beta2);
  visit("train", "eps", c.train.eps);
  visit("train", "grad_clip", c.train.grad_clip);
  visit("train", "eval_interval", c.train.eval_interval);
  visit("train", "eval_batches", c.train.eval_batches);
  visit("train", "checkpoint_interval", c.train.checkpoint_interval);
  visit("train", "seed", c.train.seed);
  visit("train", "out_dir", c.train.out_dir);
  visit("train", "threads", c.train.threads);
  visit("train", "backend", c.train.backend);
  visit("data", "path", c.data.path);
  visit("data", "val_fraction", c.data.val_fraction);
  visit("data", "probe_path", c.data.probe_path);
  visit("data", "row_start", c.data.row_start);
  visit("data", "random_row_fraction", c.data.random_row_fraction);
  visit("data", "random_rows_from_step", c.data.random_rows_from_step);
  visit("data", "early_story_starts", c.data.early_story_starts);
  visit("data", "early_stories_to_step", c.data.early_stories_to_step);
}

bool is_path_key(const std::string& section, const std::string& key) {
  return section == "data" && (key == "path" || key == "probe_path");
}

// Rethrows an InputError from f() as "ORIGIN: message". Keys and --set text are echoed
// as typed, so control bytes in them become '?': the message stays one line.
template <class F>
auto with_origin(const std::string& origin, F&& f) {
  try {
    return f();
  } catch (const InputError& e) {
    std::string message = origin + ": " + e.what();
    for (char& c : message)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
    throw InputError(message);
  }
}

// An assignment as errors quote it: cut to about 80 bytes, so a hostile 60,000-byte value
// does not become a 60,000-byte error line.
std::string quoted_assignment(const std::string& assignment) {
  constexpr size_t kMaxQuoted = 80;
  if (assignment.size() <= kMaxQuoted) return "--set " + assignment;
  size_t cut = kMaxQuoted;  // back off to a UTF-8 character boundary
  while (cut > 0 && (static_cast<unsigned char>(assignment[cut]) & 0xC0) == 0x80) --cut;
  return "--set " + assignment.substr(0, cut) + "...";
}

[[noreturn]] void wrong_type(const std::string& name, const char* expected, const json& value) {
  throw InputError(name + " must be " + expected + ", found " + json_excerpt(value));
}

// A JSON float that holds a whole value (64.0, 1e4), as a double; anything else refused.
double integral_number(const std::string& name, const json& value, const char* expected) {
  if (!value.is_number_float()) wrong_type(name, expected, value);
  const double x = value.get<double>();
  if (!std::isfinite(x) || std::trunc(x) != x) wrong_type(name, expected, value);
  return x;
}

void assign(int64_t& field, const std::string& name, const json& value) {
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > uint64_t(INT64_MAX)) wrong_type(name, "an integer in the int64 range", value);
    field = static_cast<int64_t>(value.get<uint64_t>());
  } else if (value.is_number_integer()) {
    field = value.get<int64_t>();
  } else {
    const double x = integral_number(name, value, "an integer");
    if (x < -9.2e18 || x > 9.2e18) wrong_type(name, "an integer in the int64 range", value);
    field = static_cast<int64_t>(x);
  }
}

void assign(uint64_t& field, const std::string& name, const json& value) {
  if (value.is_number_unsigned()) {
    field = value.get<uint64_t>();
  } else if (value.is_number_integer()) {
    wrong_type(name, "a non-negative integer", value);  // nlohmann keeps only negatives signed
  } else {
    const double x = integral_number(name, value, "a non-negative integer");
    if (x < 0 || x >= 18446744073709551616.0) wrong_type(name, "a non-negative integer below 2^64", value);
    field = static_cast<uint64_t>(x);
  }
}

void assign(double& field, const std::string& name, const json& value) {
  if (!value.is_number()) wrong_type(name, "a number", value);
  field = value.get<double>();
}

void assign(std::string& field, const std::string& name, const json& value) {
  if (!value.is_string()) wrong_type(name, "a string", value);
  field = value.get<std::string>();
}

// model.position's text, parsed here once: "rope" or "learned".
void assign(PositionType& field, const std::string& name, const json& value) {
  if (!value.is_string()) wrong_type(name, "a string", value);
  const std::optional<PositionType> position = parse_position(value.get<std::string>());
  if (!position) wrong_type(name, "\"rope\" or \"learned\"", value);
  field = *position;
}

// A key written as JSON text: a string, or model.position's name.
template <class T>
constexpr bool is_text_field = std::is_same_v<T, std::string> || std::is_same_v<T, PositionType>;

// A relative path is taken against base_dir; the result is absolute and normalised.
std::string resolve_path(const std::string& text, const fs::path& base_dir) {
  if (text.empty()) return text;
  fs::path path(text);
  if (path.is_relative()) path = fs::absolute(base_dir / path);
  return path.lexically_normal().string();
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

// "unknown key train.lrr (did you mean train.lr?)", else the section's valid keys.
[[noreturn]] void unknown_key(const std::string& section, const std::string& key) {
  Config probe;
  std::string valid, closest;
  size_t closest_distance = 3;  // suggest only near misses
  for_each_key(probe, [&](const char* s, const char* k, auto&) {
    if (section != s) return;
    valid += (valid.empty() ? "" : ", ") + std::string(k);
    if (size_t d = edit_distance(key, k); d < closest_distance) {
      closest_distance = d;
      closest = k;
    }
  });
  const std::string name = section + "." + key;
  if (!closest.empty()) throw InputError("unknown key " + name + " (did you mean " + section + "." + closest + "?)");
  throw InputError("unknown key " + name + " (valid " + section + " keys: " + valid + ")");
}

// Looks section.key up in the key list and stores value into it.
void set_key(Config& config, const std::string& section, const std::string& key, const json& value,
             const fs::path& base_dir) {
  bool found = false;
  for_each_key(config, [&](const char* s, const char* k, auto& field) {
    if (found || section != s || key != k) return;
    found = true;
    assign(field, section + "." + key, value);
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, std::string>)
      if (is_path_key(section, key)) field = resolve_path(field, base_dir);
  });
  if (!found) unknown_key(section, key);
}

bool is_text_key(const std::string& section, const std::string& key) {
  bool text = false;
  Config probe;
  for_each_key(probe, [&](const char* s, const char* k, auto& field) {
    if (section == s && key == k) text = is_text_field<std::decay_t<decltype(field)>>;
  });
  return text;
}

// Range rules, one line each: "train.lr must be > 0, found 0.0".
void require(bool ok, const std::string& name, const json& value, const std::string& rule) {
  if (!ok) throw InputError(name + " must be " + rule + ", found " + json_excerpt(value));
}

// Every string key is a path or a name that is written into config.json and checkpoints
// (JSON, so UTF-8) and handed to the OS (where a NUL would silently cut it short).
void validate_strings(const Config& c) {
  for_each_key(c, [](const char* section, const char* key, const auto& field) {
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, std::string>) {
      const std::string name = std::string(section) + "." + key;
      if (const size_t nul = field.find('\0'); nul != std::string::npos)
        throw InputError(name + " holds a NUL byte at offset " + std::to_string(nul) + ", found " +
                         json_excerpt(field));
      decode_utf8(field, name);  // "NAME: invalid UTF-8 at byte offset N (...)"
    }
  });
}

// The model and the optimizer compute in float32: each real key must keep its rule once
// rounded to float32, where 0.99999999 is 1 (a beta of 1 never forgets, a dropout of 1
// drops everything) and 1e-300 is 0 (an epsilon of 0 divides by zero). Checked after the
// rules above, which the value itself must meet first.
void validate_float32(const Config& c) {
  const std::string why = " (the model and the optimizer compute in float32, where this value is ";
  for (auto [name, value] : {std::pair{"model.rope_base", c.model.rope_base}, {"model.dropout", c.model.dropout},
                             {"model.norm_eps", c.model.norm_eps}, {"train.lr", c.train.lr},
                             {"train.min_lr", c.train.min_lr}, {"train.weight_decay", c.train.weight_decay},
                             {"train.beta1", c.train.beta1}, {"train.beta2", c.train.beta2},
                             {"train.eps", c.train.eps}, {"train.grad_clip", c.train.grad_clip}})
    require(std::fabs(value) <= std::numeric_limits<float>::max(), name, value, "at most 3.4028234e38" + why + "inf)");
  // Below 1 once rounded to float32: v < 1 - 2^-25 (0.99999997019...).
  for (auto [name, value] : {std::pair{"model.dropout", c.model.dropout}, {"train.beta1", c.train.beta1},
                             {"train.beta2", c.train.beta2}})
    require(static_cast<float>(value) < 1.0f, name, value, "below 1 in float32, at most 0.99999997" + why + "1)");
  // At least the smallest normal float32 once rounded (1.17549435e-38).
  for (auto [name, value] : {std::pair{"model.rope_base", c.model.rope_base}, {"model.norm_eps", c.model.norm_eps},
                             {"train.lr", c.train.lr}, {"train.eps", c.train.eps}})
    require(static_cast<float>(value) >= std::numeric_limits<float>::min(), name, value,
            "at least 1.17549435e-38, the smallest normal float32" + why +
                (static_cast<float>(value) == 0.0f ? "0)" : "subnormal)"));
}

}  // namespace

void validate_config(const Config& c) {
  const ModelConfig& m = c.model;
  // Checked here first so that the message quotes the value as JSON (escaped, cut short).
  validate_model_shape(m);
  require(m.rope_base > 0, "model.rope_base", m.rope_base, "> 0");
  require(m.dropout >= 0 && m.dropout < 1, "model.dropout", m.dropout, "in [0, 1)");
  require(m.norm_eps > 0, "model.norm_eps", m.norm_eps, "> 0");

  const TrainConfig& t = c.train;
  for (auto [name, value] : {std::pair{"train.batch_size", t.batch_size}, {"train.max_steps", t.max_steps},
                             {"train.eval_interval", t.eval_interval}, {"train.eval_batches", t.eval_batches},
                             {"train.checkpoint_interval", t.checkpoint_interval}})
    require(value >= 1, name, value, ">= 1");
  require(t.lr > 0, "train.lr", t.lr, "> 0");
  require(t.min_lr >= 0 && t.min_lr <= t.lr, "train.min_lr", t.min_lr, "in [0, train.lr = " + json(t.lr).dump() + "]");
  require(t.warmup_steps >= 0, "train.warmup_steps", t.warmup_steps, ">= 0");
  require(t.weight_decay >= 0, "train.weight_decay", t.weight_decay, ">= 0");
  require(t.beta1 >= 0 && t.beta1 < 1, "train.beta1", t.beta1, "in [0, 1)");
  require(t.beta2 >= 0 && t.beta2 < 1, "train.beta2", t.beta2, "in [0, 1)");
  require(t.eps > 0, "train.eps", t.eps, "> 0");
  require(t.grad_clip >= 0, "train.grad_clip", t.grad_clip, ">= 0 (0 turns clipping off)");
  require(t.freeze_block0_qk_to_step >= 0, "train.freeze_block0_qk_to_step", t.freeze_block0_qk_to_step, ">= 0");
  validate_float32(c);
  for (auto [name, value] : {std::pair{"train.max_steps", t.max_steps}, {"train.warmup_steps", t.warmup_steps},
                             {"train.freeze_block0_qk_to_step", t.freeze_block0_qk_to_step},
                             {"train.eval_interval", t.eval_interval},
                             {"train.checkpoint_interval", t.checkpoint_interval}})
    require(value <= kMaxStepCount, name, value, "<= " + std::to_string(kMaxStepCount));
  require(t.batch_size <= kMaxBatchSize, "train.batch_size", t.batch_size, "<= " + std::to_string(kMaxBatchSize));
  require(t.eval_batches <= kMaxEvalBatches, "train.eval_batches", t.eval_batches,
          "<= " + std::to_string(kMaxEvalBatches));
  require(t.threads >= 0 && t.threads <= kMaxThreads, "train.threads", t.threads,
          "in [0, " + std::to_string(kMaxThreads) + "] (0 uses all cores)");
  require(t.backend.empty() || t.backend == "openblas" || t.backend == "onednn" || t.backend == "reference",
          "train.backend", t.backend, "one of \"\", \"openblas\", \"onednn\", \"reference\"");
  require(!t.out_dir.empty(), "train.out_dir", t.out_dir, "a folder name");

  require(c.data.val_fraction > 0 && c.data.val_fraction < 1, "data.val_fraction", c.data.val_fraction,
          "in (0, 1)");
  require(c.data.row_start == "random" || c.data.row_start == "story", "data.row_start", c.data.row_start,
          "\"random\" (any symbol) or \"story\" (right after a newline)");
  require(c.data.random_row_fraction >= 0 && c.data.random_row_fraction <= 1, "data.random_row_fraction",
          c.data.random_row_fraction, "in [0, 1]");
  require(c.data.random_row_fraction == 0 || c.data.row_start == "story", "data.random_row_fraction",
          c.data.random_row_fraction, "0 unless data.row_start is \"story\" (\"random\" rows all start anywhere)");
  require(c.data.random_rows_from_step >= 0 && c.data.random_rows_from_step <= kMaxStepCount,
          "data.random_rows_from_step", c.data.random_rows_from_step, "in [0, " + std::to_string(kMaxStepCount) + "]");
  require(c.data.early_story_starts.empty() || c.data.row_start == "story", "data.early_story_starts",
          c.data.early_story_starts, "\"\" unless data.row_start is \"story\" (\"random\" rows start anywhere)");
  require(c.data.early_stories_to_step >= 0 && c.data.early_stories_to_step <= kMaxStepCount,
          "data.early_stories_to_step", c.data.early_stories_to_step, "in [0, " + std::to_string(kMaxStepCount) + "]");
  validate_strings(c);
}

namespace {

// Keys and types only; the caller validates the ranges.
Config config_from_json_unvalidated(const json& input, const fs::path& base_dir, const std::string& origin) {
  return with_origin(origin, [&] {
    if (!input.is_object()) throw InputError("config must be a JSON object, found " + json_excerpt(input));
    Config config;
    for (const auto& [section, body] : input.items()) {
      if (section != "model" && section != "train" && section != "data")
        throw InputError("unknown key " + section + " (valid sections: model, train, data)");
      if (!body.is_object()) wrong_type(section, "an object", body);
      for (const auto& [key, value] : body.items()) set_key(config, section, key, value, base_dir);
    }
    return config;
  });
}

}  // namespace

Config config_from_json(const json& input, const fs::path& base_dir, const std::string& origin) {
  Config config = config_from_json_unvalidated(input, base_dir, origin);
  with_origin(origin, [&] { validate_config(config); });
  return config;
}

Config read_config_file(const fs::path& file) {
  const std::string origin = file.string();
  // A regular file of bounded size ("config PATH is a FIFO, expected a text file").
  const std::string text = read_file_bytes(file, "config", kMaxConfigBytes);
  const json parsed = with_origin(origin, [&] { return parse_json_bounded(text); });
  const fs::path base_dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  return config_from_json_unvalidated(parsed, base_dir, origin);
}

Config load_config(const fs::path& file) {
  Config config = read_config_file(file);
  with_origin(file.string(), [&] { validate_config(config); });
  return config;
}

namespace {

// Sets the key an assignment names, types checked, ranges not.
void set_from_assignment(Config& config, const std::string& assignment) {
  with_origin(quoted_assignment(assignment), [&] {
    const size_t equals = assignment.find('=');
    const std::string name = assignment.substr(0, equals);
    const size_t dot = name.find('.');
    if (equals == std::string::npos || dot == std::string::npos || dot == 0 || dot + 1 == name.size())
      throw InputError("expected section.key=value");
    const std::string section = name.substr(0, dot), key = name.substr(dot + 1);
    const std::string text = assignment.substr(equals + 1);
    // The value is JSON when it parses as JSON (3e-4, 64, "x"), else the text itself, so
    // out_dir=runs/x needs no quotes; a string key always takes the text as written.
    // (Bounded: a value nested 60,000 deep is taken as text and refused by its type.)
    json value;
    bool parsed = true;
    try {
      value = parse_json_bounded(text);
    } catch (const InputError&) {
      parsed = false;
    }
    if (!parsed || (is_text_key(section, key) && !value.is_string())) {
      decode_utf8(text, name + " value");  // config.json and checkpoints hold it as JSON, which is UTF-8
      value = text;
    }
    set_key(config, section, key, value, fs::current_path());
  });
}

}  // namespace

void apply_overrides(Config& config, const std::vector<std::string>& assignments, const std::string& origin) {
  Config updated = config;
  for (const std::string& assignment : assignments) set_from_assignment(updated, assignment);
  with_origin(origin, [&] { validate_config(updated); });
  config = std::move(updated);
}

void apply_override(Config& config, const std::string& assignment) {
  apply_overrides(config, {assignment}, quoted_assignment(assignment));
}

void set_config_value(Config& config, const std::string& name, const json& value, const std::string& option) {
  with_origin(option, [&] {
    const size_t dot = name.find('.');
    MG_CHECK(dot != std::string::npos, "set_config_value: " + name + " is not section.key");
    set_key(config, name.substr(0, dot), name.substr(dot + 1), value, fs::current_path());
  });
}

json config_to_json(const Config& config) {
  json out = {{"model", json::object()}, {"train", json::object()}, {"data", json::object()}};
  for_each_key(config, [&](const char* section, const char* key, const auto& field) {
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, PositionType>)
      out[section][key] = position_name(field);
    else
      out[section][key] = field;
  });
  return out;
}

}  // namespace mg
