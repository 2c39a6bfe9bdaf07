// Saving and loading the mini-gpt checkpoint on top of the safetensors layer. Loading
// checks, in order: the header's sizes and offsets (SafetensorsReader), the metadata
// (format, config, vocab, step), the tensor names and shapes against the config, and
// only then reads the data and its checksum.
#include "io/checkpoint.h"

#include <cmath>
#include <set>
#include <span>

#include <nlohmann/json.hpp>

#include "data/json_limits.h"
#include "io/safetensors.h"
#include "core/error.h"
#include "model_spec/parameter_shapes.h"

namespace mg {
namespace {

using nlohmann::json;

const std::vector<std::string> kReservedKeys = {"format", "format_version", "config", "vocab", "step",
                                                kDataSha256Key};

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

size_t code_point_count(const std::string& utf8) {
  size_t count = 0;
  for (unsigned char byte : utf8) count += (byte & 0xC0) != 0x80;  // count non-continuation bytes
  return count;
}

std::vector<std::string> parse_vocab(const std::string& text, int64_t vocab_size) {
  json parsed;
  try {
    parsed = parse_json_bounded(text);
  } catch (const InputError& e) {
    throw InputError(std::string("__metadata__.vocab: ") + e.what());
  }
  if (!parsed.is_array()) throw InputError("__metadata__.vocab must be a JSON array, found " + json_excerpt(parsed));
  std::vector<std::string> vocab;
  std::map<std::string, size_t> first_id;
  for (const auto& symbol : parsed) {
    const size_t id = vocab.size();
    if (!symbol.is_string() || code_point_count(symbol.get<std::string>()) != 1)
      throw InputError("__metadata__.vocab entry " + std::to_string(id) + " must be a one-symbol string, found " +
                       json_excerpt(symbol));
    if (auto [it, fresh] = first_id.emplace(symbol.get<std::string>(), id); !fresh)
      throw InputError("__metadata__.vocab repeats the symbol " + json_excerpt(symbol) + " at ids " +
                       std::to_string(it->second) + " and " + std::to_string(id));
    vocab.push_back(symbol.get<std::string>());
  }
  if (static_cast<int64_t>(vocab.size()) != vocab_size)
    throw InputError("__metadata__.vocab holds " + std::to_string(vocab.size()) +
                     " symbols, the config's model.vocab_size is " + std::to_string(vocab_size));
  return vocab;
}

// The step is written as decimal digits; anything else (sign, spaces, overflow) is refused.
int64_t parse_step(const std::string& text) {
  const auto refuse = [&] {
    throw InputError("__metadata__.step must be a non-negative integer, found " + json_excerpt(text));
  };
  if (text.empty() || text.size() > 18) refuse();  // 18 digits always fit an int64
  int64_t step = 0;
  for (char c : text) {
    if (c < '0' || c > '9') refuse();
    step = step * 10 + (c - '0');
  }
  return step;
}

// A NaN or infinity in the weights (or moments) would only surface later as "loss nan";
// the file is refused on load instead, naming the tensor and the first such element.
void refuse_non_finite(const std::string& name, const Tensor& tensor, const std::string& origin) {
  const std::span<const float> values = tensor.span();
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw InputError(origin + ": tensor " + name + " holds a non-finite value (" +
                       (std::isnan(values[i]) ? "nan" : values[i] > 0 ? "inf" : "-inf") + ") at element " +
                       std::to_string(i) + " of " + std::to_string(values.size()));
}

}  // namespace

bool Checkpoint::has_optimizer_state() const {
  for (const auto& [name, tensor] : tensors)
    if (starts_with(name, kExpAvgPrefix)) return true;
  return false;
}

void check_checkpoint_tensors(const ModelConfig& model, const std::vector<std::pair<std::string, Shape>>& found,
                              const std::string& origin) {
  // Names come from the file, so control bytes become '?' to keep the message one line.
  const auto refuse = [&](const std::string& what) {
    std::string message = origin + ": " + what;
    for (char& c : message)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
    throw InputError(message);
  };
  // Every block holds 12 tensors; a config claiming more blocks than the file could hold
  // is refused before its name list is built (a corrupt n_layer must not cost memory).
  if (model.n_layer > static_cast<int64_t>(found.size()) / 12)
    refuse("the config's model.n_layer = " + std::to_string(model.n_layer) + " needs at least " +
           std::to_string(12 * model.n_layer) + " tensors, the file holds " + std::to_string(found.size()));

  const std::vector<NamedShape> expected_list = expected_parameter_shapes(model);
  const std::map<std::string, Shape> expected(expected_list.begin(), expected_list.end());
  std::set<std::string> present;
  size_t moment_count = 0;
  for (const auto& [name, shape] : found) {
    if (!present.insert(name).second) refuse("tensor " + name + " appears twice");
    std::string parameter = name;
    for (const std::string prefix : {kExpAvgPrefix, kExpAvgSqPrefix}) {
      if (starts_with(name, prefix)) {
        parameter = name.substr(prefix.size());
        ++moment_count;
      }
    }
    auto it = expected.find(parameter);
    if (it == expected.end())
      refuse("unknown tensor " + name + (parameter == name ? "" : " (" + parameter + " is not a parameter)") +
             ": the config's model has no such parameter");
    if (shape != it->second)
      refuse("tensor " + name + " has shape " + shape_str(shape) + ", expected " + shape_str(it->second));
  }
  for (const auto& [name, shape] : expected_list)
    if (!present.count(name)) refuse("tensor " + name + " is missing (expected shape " + shape_str(shape) + ")");
  if (moment_count == 0) return;
  // Resuming AdamW with moments for only some parameters would silently restart those.
  for (const auto& [name, shape] : expected_list)
    for (const std::string prefix : {kExpAvgPrefix, kExpAvgSqPrefix})
      if (!present.count(prefix + name))
        refuse("tensor " + prefix + name + " is missing: the file holds AdamW moments, so it needs both for every parameter");
}

void save_checkpoint(const std::filesystem::path& path, const Config& config, const std::vector<std::string>& vocab,
                     int64_t step, const std::vector<std::pair<std::string, const Tensor*>>& tensors,
                     const std::map<std::string, std::string>& extra) {
  MG_CHECK(static_cast<int64_t>(vocab.size()) == config.model.vocab_size,
           "save_checkpoint: vocab of " + std::to_string(vocab.size()) + " symbols, config vocab_size " +
               std::to_string(config.model.vocab_size));
  MG_CHECK(step >= 0, "save_checkpoint: negative step");
  std::vector<std::pair<std::string, Shape>> shapes;
  for (const auto& [name, tensor] : tensors) {
    MG_CHECK(tensor != nullptr && tensor->defined(), "save_checkpoint: tensor " + name + " has no data");
    shapes.emplace_back(name, tensor->shape());
  }
  // Writing a file that load_checkpoint would refuse is a bug in the caller.
  try {
    check_checkpoint_tensors(config.model, shapes, "save_checkpoint " + path.string());
  } catch (const InputError& e) {
    throw InternalError(e.what());
  }

  std::map<std::string, std::string> metadata = extra;
  for (const std::string& key : kReservedKeys)
    MG_CHECK(!extra.count(key), "save_checkpoint: extra metadata may not set reserved key " + key);
  const auto replace = json::error_handler_t::replace;
  metadata["format"] = kCheckpointFormat;
  metadata["format_version"] = kCheckpointFormatVersion;
  metadata["config"] = config_to_json(config).dump(-1, ' ', false, replace);
  metadata["vocab"] = json(vocab).dump(-1, ' ', false, replace);
  metadata["step"] = std::to_string(step);
  write_safetensors(path, metadata, tensors);
}

Checkpoint load_checkpoint(const std::filesystem::path& path) {
  const std::string origin = path.string();
  SafetensorsReader reader(path);  // sizes, header, dtypes, offsets
  Checkpoint checkpoint;
  checkpoint.metadata = reader.metadata();
  const auto& metadata = checkpoint.metadata;
  const auto field = [&](const std::string& key) -> const std::string& {
    auto it = metadata.find(key);
    if (it == metadata.end())
      throw InputError(origin + ": __metadata__ lacks \"" + key + "\" (not a mini-gpt checkpoint?)");
    return it->second;
  };
  if (field("format") != kCheckpointFormat)
    throw InputError(origin + ": __metadata__.format is " + json_excerpt(field("format")) + ", expected \"" +
                     kCheckpointFormat + "\"");
  if (field("format_version") != kCheckpointFormatVersion)
    throw InputError(origin + ": __metadata__.format_version is " + json_excerpt(field("format_version")) +
                     ", expected \"" + kCheckpointFormatVersion + "\"");

  const std::string& config_text = field("config");
  json config_json;
  try {
    config_json = parse_json_bounded(config_text);
  } catch (const InputError& e) {
    throw InputError(origin + ": __metadata__.config: " + e.what());
  }
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  checkpoint.config = config_from_json(config_json, folder, origin + ": __metadata__.config");
  try {
    checkpoint.vocab = parse_vocab(field("vocab"), checkpoint.config.model.vocab_size);
    checkpoint.step = parse_step(field("step"));
  } catch (const InputError& e) {
    throw InputError(origin + ": " + e.what());
  }

  // Names and shapes against the config before a byte of tensor data is read.
  std::vector<std::pair<std::string, Shape>> shapes;
  for (const auto& entry : reader.entries()) shapes.emplace_back(entry.name, entry.shape);
  check_checkpoint_tensors(checkpoint.config.model, shapes, origin);

  for (auto& [name, tensor] : reader.read_tensors()) {
    refuse_non_finite(name, tensor, origin);
    checkpoint.tensors.emplace(name, std::move(tensor));
  }
  return checkpoint;
}

}  // namespace mg
