// `mini-gpt sample`: stream text from a checkpoint, one symbol at a time, as it is
// chosen. The KV cache makes each symbol cost one position (inference/generate.h); nothing
// of the text is kept, so any length runs in constant memory.
#include <chrono>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>

#include "cli/commands.h"
#include "core/error.h"
#include "data/text_file.h"
#include "data/utf8.h"
#include "inference/generate.h"
#include "inference/model_store.h"

namespace mg::cli {
namespace {

struct SampleOptions {
  std::string checkpoint, prompt;
  std::optional<std::string> prompt_file;  // optional: "--prompt-file ''" is refused, not ignored
  int64_t max_new_tokens = 200, num_samples = 1;
  std::optional<uint64_t> seed;
  SamplingSettings sampling;
  bool stats = false, no_cache = false, context_shift = false;
  ComputeOptions compute;
};

// Writes symbols to stdout as they come. A write call per symbol would cost more than
// choosing it (tens of thousands a second), so stdout is flushed once 20 ms have passed
// since the last flush, and at the end: a reader still sees the text flow as it is made.
// A failed write (a full disk, a closed stdout) stops the generation at the next flush.
class SymbolStream {
 public:
  void write(const std::string& utf8) {
    std::fwrite(utf8.data(), 1, utf8.size(), stdout);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_flush_ >= std::chrono::milliseconds(20)) flush();
  }
  void flush() {
    check_standard_output();
    last_flush_ = std::chrono::steady_clock::now();
  }

 private:
  std::chrono::steady_clock::time_point last_flush_{};  // the epoch: the first symbol goes out at once
};

}  // namespace

Run add_sample_command(CLI::App& app) {
  auto o = std::make_shared<SampleOptions>();
  CLI::App* cmd = app.add_subcommand("sample", "Generate text from a checkpoint");
  cmd->add_option("--checkpoint", o->checkpoint, "Checkpoint (.safetensors)")->required();
  auto* prompt = cmd->add_option("--prompt", o->prompt,
                                 "Text to continue (default: empty, which starts from a newline when the "
                                 "vocabulary has one, else from its first symbol)");
  cmd->add_option("--prompt-file", o->prompt_file, "Read the prompt from a UTF-8 file")->excludes(prompt);
  cmd->add_option("--max-new-tokens", o->max_new_tokens, "Symbols to generate per sample (default 200)")
      ->check(integer_in(0, std::numeric_limits<int64_t>::max()));
  cmd->add_option("--temperature", o->sampling.temperature, "Softmax temperature; 0 is greedy arg-max (default 1)");
  cmd->add_option("--top-k", o->sampling.top_k, "Sample among the K most likely symbols; 0 keeps all (default 0)");
  cmd->add_option("--top-p", o->sampling.top_p, "Nucleus: the smallest set with probability >= P (default 1)");
  cmd->add_option("--seed", o->seed, "Random seed in [0, 2^64); the same seed prints the same text (default: random)")
      ->check(unsigned_64());
  cmd->add_option("--num-samples", o->num_samples, "Independent samples, each under a header line (default 1)")
      ->check(integer_in(1, std::numeric_limits<int64_t>::max()));
  cmd->add_flag("--stats", o->stats, "Print time to first symbol and symbols/s to stderr");
  auto* no_cache = cmd->add_flag("--no-cache", o->no_cache, "Recompute the whole context for every symbol (for comparison)");
  cmd->add_flag("--context-shift", o->context_shift,
                "Past block_size, drop the oldest half of the KV cache and shift the kept keys' RoPE "
                "positions instead of rebuilding the window (RoPE models only; not the window's logits)")
      ->excludes(no_cache);
  // All cores by default, as for the other commands: the decoder (nn/decoder.h) keeps a
  // generation step's one row on the calling thread and splits only many rows at once (a
  // prompt, a rebuilt window past block_size) over the threads.
  o->compute.add_to(*cmd);

  return [o]() {
    validate_sampling(o->sampling);
    o->compute.apply();
    LoadedModel loaded = load_model(o->checkpoint);
    const Vocab& vocab = loaded.vocab;
    // A prompt file is a regular file of at most 64 MB (data/text_file.h), so a FIFO or
    // /dev/zero is refused rather than waited on or read into memory.
    std::u32string prompt_text = o->prompt_file ? read_utf8_file(*o->prompt_file, "--prompt-file")
                                                : decode_utf8(o->prompt, "--prompt");
    std::vector<int32_t> prompt_ids = vocab.encode(prompt_text, o->prompt_file ? *o->prompt_file : "--prompt");
    if (prompt_ids.empty()) prompt_ids.push_back(vocab.find(U'\n').value_or(0));

    const uint64_t seed = o->seed ? *o->seed : std::random_device{}();
    const GenerationMode mode = o->no_cache        ? GenerationMode::no_cache
                                : o->context_shift ? GenerationMode::context_shift
                                                   : GenerationMode::window;
    if (mode == GenerationMode::context_shift && loaded.model.config().position != PositionType::rope)
      throw InputError("--context-shift needs a model with RoPE positions; " + o->checkpoint +
                       " has model.position \"" + position_name(loaded.model.config().position) + "\"");
    Generator generator(loaded.model, mode);
    using Clock = std::chrono::steady_clock;
    double first_symbol_s = 0.0, generate_s = 0.0;
    int64_t generated = 0;
    SymbolStream out;
    for (int64_t sample = 0; sample < o->num_samples; ++sample) {
      if (o->num_samples > 1) std::printf("%s=== sample %lld of %lld ===\n", sample ? "\n" : "",
                                           static_cast<long long>(sample + 1), static_cast<long long>(o->num_samples));
      out.write(encode_utf8(prompt_text));
      Rng rng(seed + static_cast<uint64_t>(sample));
      const auto start = Clock::now();
      generator.start(prompt_ids);
      for (int64_t i = 0; i < o->max_new_tokens; ++i) {
        const int32_t id = choose_symbol(generator.logits(), o->sampling, rng);
        out.write(vocab.symbols()[id]);
        if (i == 0) out.flush();  // the first symbol is shown at once: it is what the wait was for
        if (i == 0 && sample == 0) first_symbol_s = std::chrono::duration<double>(Clock::now() - start).count();
        if (i + 1 < o->max_new_tokens) generator.append(id);
        ++generated;
      }
      generate_s += std::chrono::duration<double>(Clock::now() - start).count();
    }
    out.write("\n");
    out.flush();
    if (o->stats)
      std::fprintf(stderr, "time to first symbol %.2f ms; %lld symbols in %.3f s: %.0f symbols/s; mode %s\n",
                   first_symbol_s * 1e3, static_cast<long long>(generated), generate_s,
                   generated / std::max(generate_s, 1e-9), std::string(generation_mode_name(mode)).c_str());
    return kExitOk;
  };
}

}  // namespace mg::cli
