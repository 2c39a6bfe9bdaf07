// The model's sizes, checked once for every way a model comes to be: a config file, a
// checkpoint's metadata, a Gpt built in code.
#include "model_spec/model_config.h"

#include "core/error.h"

namespace mg {
namespace {

// Model dimensions above this are refused: with every factor below 2^20 the largest
// tensor, [mlp_ratio*D, D], still counts its elements in an int64.
constexpr int64_t kMaxModelDim = int64_t(1) << 20;
// RoPE tables, position embeddings and every layer's KV cache grow as block_size * n_embd;
// bounding the product keeps a hand-made config or checkpoint from claiming gigabytes
// that no tensor in the file accounts for (2^24 floats: 64 MB per table).
constexpr int64_t kMaxPositionsTimesWidth = int64_t(1) << 24;

}  // namespace

const char* position_name(PositionType position) {
  return position == PositionType::rope ? "rope" : "learned";
}

std::optional<PositionType> parse_position(std::string_view text) {
  if (text == "rope") return PositionType::rope;
  if (text == "learned") return PositionType::learned;
  return std::nullopt;
}

void validate_model_shape(const ModelConfig& m) {
  for (auto [name, value] : {std::pair{"model.vocab_size", m.vocab_size}, {"model.n_layer", m.n_layer},
                             {"model.n_embd", m.n_embd}, {"model.n_head", m.n_head},
                             {"model.block_size", m.block_size}, {"model.mlp_ratio", m.mlp_ratio}}) {
    if (value < 1) throw InputError(std::string(name) + " must be >= 1, found " + std::to_string(value));
    if (value > kMaxModelDim)
      throw InputError(std::string(name) + " must be <= " + std::to_string(kMaxModelDim) + ", found " +
                       std::to_string(value));
  }
  if (m.block_size * m.n_embd > kMaxPositionsTimesWidth)
    throw InputError("model.block_size * model.n_embd = " + std::to_string(m.block_size) + " * " +
                     std::to_string(m.n_embd) + " exceeds " + std::to_string(kMaxPositionsTimesWidth));
  if (m.n_embd % m.n_head != 0)
    throw InputError("model.n_embd = " + std::to_string(m.n_embd) + " must be divisible by model.n_head = " +
                     std::to_string(m.n_head));
  if (m.position == PositionType::rope && m.head_width() % 2 != 0)
    throw InputError("model.position \"rope\" needs an even head width, found n_embd / n_head = " +
                     std::to_string(m.head_width()));
}

}  // namespace mg
