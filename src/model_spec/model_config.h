// The model's shape and arithmetic knobs: the `model.` keys of docs/config.md. A plain
// description, below both nn (which builds the model) and io (which reads and writes it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mg {

// model.position: rotary positions on q and k, or a learned pos_emb added to the embedding.
// The config and checkpoint text is "rope" or "learned", parsed once when a config is read.
enum class PositionType { rope, learned };

const char* position_name(PositionType position);                   // "rope", "learned"
std::optional<PositionType> parse_position(std::string_view text);  // empty for any other text

struct ModelConfig {
  int64_t vocab_size = 79;  // set from the corpus, never typed by hand
  int64_t n_layer = 4;
  int64_t n_embd = 64;      // D
  int64_t n_head = 2;       // H; head width d = D / H
  int64_t block_size = 64;  // T_max
  PositionType position = PositionType::rope;
  double rope_base = 10000.0;
  int64_t mlp_ratio = 4;
  double dropout = 0.0;
  double norm_eps = 1e-5;

  int64_t head_width() const { return n_embd / n_head; }
};

// Throws InputError naming the key when no model can be built of these sizes: a size below
// 1 or above 2^20, block_size * n_embd above 2^24, n_embd not divisible by n_head, an
// unknown position, or RoPE on an odd head width. (io checks the real-valued keys.)
void validate_model_shape(const ModelConfig& config);

}  // namespace mg
