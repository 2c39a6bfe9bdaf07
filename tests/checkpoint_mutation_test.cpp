// Hostile checkpoints: a small valid checkpoint (a tiny model with its AdamW moments) is
// truncated at every byte offset and mutated 10,000+ times with a seeded generator (bit
// flips, byte overwrites, header-length edits and structured header edits: huge or
// negative shapes, overlapping or negative offsets, other dtypes, missing and extra names,
// metadata that is not JSON, ...). Each load must either succeed with tensors bit-identical
// to the original or throw InputError/IoError with a one-line message. The campaign runs
// in a forked child whose address space is capped at its size + 1 GB (RLIMIT_AS) and whose
// time is capped by alarm(), so a crash, a hang or an allocation over 1 GB shows up as the
// child's death, not as a silently passing test. The CLI then answers a few such files
// with exit 2 and one "mini-gpt: error:" line.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "config_support.h"
#include "core/error.h"
#include "inference/model_store.h"
#include "io/safetensors.h"
#include "model_support.h"
#include "optim/adamw.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace mg;
using nlohmann::json;

namespace {

constexpr int kMutations = 10000;
constexpr uint64_t kAllocationLimit = uint64_t(1) << 30;  // 1 GB over the child's starting size

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Unlinks first: truncating a file that holds data makes ext4 flush it on close
// (auto_da_alloc), which costs milliseconds per mutant; a fresh file costs nothing.
void write_bytes(const fs::path& path, const std::string& bytes) {
  ::unlink(path.c_str());
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The tiny model the campaign mutates: 1 layer, D = 4, V = 4, with AdamW moments, so the
// file (about 7 KB) holds 3 x 15 tensors whose names and offsets a mutation can scramble.
Config tiny_config() {
  Config c;
  c.model.vocab_size = 4;
  c.model.n_layer = 1;
  c.model.n_embd = 4;
  c.model.n_head = 2;
  c.model.block_size = 8;
  return c;
}

void write_original(const fs::path& path) {
  const Config config = tiny_config();
  Gpt model = test::small_model(1, 4, 8, 4, 99);
  AdamW optimizer(model.parameters(), {0.9, 0.99, 1e-8, 0.1});
  // Moments with recognisable, distinct values (a fresh optimizer's would all be zero).
  float next = 0.0f;
  for (Tensor AdamWState::*moment : {&AdamWState::exp_avg, &AdamWState::exp_avg_sq})
    for (AdamWState& state : optimizer.states())
      for (int64_t i = 0; i < (state.*moment).numel(); ++i) (state.*moment)[i] = (next += 0.001f);
  save_model(path, config, Vocab::from_symbols({"\n", "a", "b", "c"}), 12, model, &optimizer, {{"note", "x"}});
}

// ---- mutations ---------------------------------------------------------------------------

struct Parsed {
  json header;
  std::string data;
};

Parsed split(const std::string& file) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<unsigned char>(file[static_cast<size_t>(i)]);
  return {json::parse(file.substr(8, n)), file.substr(8 + n)};
}

std::string join(const std::string& header_text, const std::string& data) {
  std::string text = header_text;
  while (text.size() % 8) text += ' ';
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((uint64_t(text.size()) >> (8 * i)) & 0xFF);
  return out + text + data;
}

// A random tensor name of the header (never "__metadata__").
std::string pick_tensor(const json& header, std::mt19937_64& rng) {
  std::vector<std::string> names;
  for (const auto& [name, entry] : header.items())
    if (name != "__metadata__") names.push_back(name);
  return names[rng() % names.size()];
}

json weird_number(std::mt19937_64& rng) {
  static const std::vector<json> values = {
      json(-1), json(-4), json(0), json(1), json(3), json(uint64_t(1) << 32), json(uint64_t(1) << 62),
      json(uint64_t(1) << 63), json(UINT64_MAX), json(INT64_MIN), json(1.5), json(1e300), json("8"), json(nullptr),
      json::array(), json::object(), json(true), json(uint64_t(4611686018427387904ULL) + 1)};
  return values[rng() % values.size()];
}

// One structured edit of the header, the kind a hand edit or another writer produces.
std::string header_edit(const std::string& original, std::mt19937_64& rng) {
  Parsed p = split(original);
  json& h = p.header;
  json& meta = h["__metadata__"];
  const std::string name = pick_tensor(h, rng);
  json& entry = h[name];
  switch (rng() % 20) {
    case 0: entry["shape"][rng() % std::max<size_t>(1, entry["shape"].size())] = weird_number(rng); break;
    case 1: entry["shape"] = json::array({uint64_t(1) << 31, uint64_t(1) << 31, uint64_t(1) << 31}); break;
    case 2: entry["data_offsets"][rng() % 2] = weird_number(rng); break;
    case 3: {  // overlap the previous tensor by a few bytes, keeping the span
      const uint64_t shift = 4 * (1 + rng() % 3), b = entry["data_offsets"][0], e = entry["data_offsets"][1];
      entry["data_offsets"] = {b >= shift ? b - shift : b + shift, e >= shift ? e - shift : e + shift};
      break;
    }
    case 4: entry["data_offsets"] = {entry["data_offsets"][1], entry["data_offsets"][0]}; break;
    case 5: {
      static const std::vector<json> dtypes = {"F16", "BF16", "F64", "I32", "U8", "f32", "", 5, nullptr};
      entry["dtype"] = dtypes[rng() % dtypes.size()];
      break;
    }
    case 6: h.erase(name); break;  // a missing name (and a gap)
    case 7: {                      // an extra name, its data appended so the tiling still holds
      const uint64_t end = p.data.size();
      h["extra." + std::to_string(rng() % 100)] = {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {end, end + 8}}};
      p.data += std::string(8, '\x11');
      break;
    }
    case 8: {  // a renamed tensor
      json moved = entry;
      h.erase(name);
      h[name + (rng() % 2 ? "x" : "")] = moved;
      h[std::string("blocks.7.") + name.substr(name.find('.') + 1)] = moved;
      break;
    }
    case 9: {
      static const std::vector<std::string> texts = {"{", "", "null", "[]", "{\"model\": 5}", "not json",
                                                     "{\"model\":{\"n_layer\":1e300}}", "[\"a\"]"};
      meta[rng() % 2 ? "config" : "vocab"] = texts[rng() % texts.size()];
      break;
    }
    case 10: {  // a config whose model would be huge, or just different
      json config = json::parse(meta["config"].get<std::string>());
      static const std::vector<std::string> keys = {"n_layer", "n_embd", "n_head", "block_size", "mlp_ratio",
                                                    "vocab_size"};
      config["model"][keys[rng() % keys.size()]] = weird_number(rng);
      meta["config"] = config.dump();
      break;
    }
    case 11: {
      static const std::vector<std::string> steps = {"-1", "1e9", "99999999999999999999", "", " 3", "0x10"};
      meta["step"] = steps[rng() % steps.size()];
      break;
    }
    case 12: meta.erase(rng() % 2 ? "format" : "data_sha256"); break;
    case 13: meta["data_sha256"] = std::string(64, "0f"[rng() % 2]); break;
    case 14: h["__metadata__"] = weird_number(rng); break;
    case 15: meta["vocab"] = "[\"\\n\",\"a\",\"b\",\"c\",\"d\"]"; break;
    case 16: entry["extra_key"] = 1; break;
    case 17: entry.erase(rng() % 2 ? "shape" : "dtype"); break;
    case 18: h = json::array({h}); break;
    default: {  // shape and offsets inflated together: consistent, but far beyond the file
      const uint64_t b = entry["data_offsets"][0], rows = uint64_t(1) << (20 + rng() % 40);
      entry["shape"] = {rows, 4};
      entry["data_offsets"] = {b, b + rows * 16};
      break;
    }
  }
  return join(h.dump(), p.data);
}

std::string mutate(const std::string& original, size_t header_end, std::mt19937_64& rng) {
  std::string bytes = original;
  const auto anywhere = [&] { return static_cast<size_t>(rng() % bytes.size()); };
  // Most of the interesting structure is in the header, so half the byte edits aim there.
  const auto in_header = [&] { return static_cast<size_t>(rng() % header_end); };
  switch (rng() % 8) {
    case 0: bytes[anywhere()] ^= static_cast<char>(1u << (rng() % 8)); break;
    case 1: bytes[in_header()] ^= static_cast<char>(1u << (rng() % 8)); break;
    case 2: bytes[anywhere()] = static_cast<char>(rng() % 256); break;
    case 3: {
      static const char interesting[] = {'\0', '\xff', '"', '{', '}', '[', ']', ',', ':', '-', '9', '0', ' ', '\\', 'e'};
      bytes[in_header()] = interesting[rng() % sizeof interesting];
      break;
    }
    case 4: {  // the length field: random, huge, or off by a little
      uint64_t n = 0;
      for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
      const uint64_t choices[] = {rng(), n + 1 + rng() % 16, n - 1 - rng() % 16, n + 8, n - 8, UINT64_MAX,
                                  kMaxHeaderBytes + 1, 0};
      n = choices[rng() % 8];
      for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
      break;
    }
    case 5: {  // several edits at once, all in the header or all in the data
      // (Edits in both can rename the optional data_sha256 key and change the data: a file
      // without the key is accepted, as the PyTorch reference writes none, so that double
      // fault is beyond what an optional checksum can catch.)
      const bool header = rng() % 2;
      const size_t begin = header ? 0 : header_end, span = header ? header_end : bytes.size() - header_end;
      for (int k = 0; k < 2 + static_cast<int>(rng() % 4); ++k)
        bytes[begin + rng() % span] = static_cast<char>(rng() % 256);
      break;
    }
    case 6: bytes.insert(anywhere(), std::string(1 + rng() % 8, static_cast<char>(rng() % 256))); break;
    default: return header_edit(original, rng);
  }
  return bytes;
}

// ---- the campaign (runs in the forked child) -----------------------------------------------

struct Tally {
  long truncations = 0, mutations = 0, successes = 0, refusals = 0;
  char failure[512] = {0};  // the first bad outcome, if any
};

// Loads PATH; returns true when it loaded. A load that succeeds with other tensors, or
// fails other than with a one-line InputError/IoError, is written to tally.failure.
bool load_once(const fs::path& path, const std::map<std::string, Tensor>& original, Tally& tally,
               const std::string& what) {
  // The first failing file is kept for a look: TMPDIR/mini-gpt-mutation-failure.safetensors.
  const auto fail = [&](const std::string& why) {
    if (tally.failure[0]) return;
    const fs::path kept = fs::temp_directory_path() / "mini-gpt-mutation-failure.safetensors";
    std::error_code ignored;
    fs::copy_file(path, kept, fs::copy_options::overwrite_existing, ignored);
    std::snprintf(tally.failure, sizeof tally.failure, "%s (kept as %s): %s", what.c_str(), kept.c_str(), why.c_str());
  };
  try {
    LoadedModel loaded = load_model(path);
    bool same = loaded.checkpoint.tensors.size() == original.size();
    for (const auto& [name, tensor] : original) {
      auto it = loaded.checkpoint.tensors.find(name);
      same = same && it != loaded.checkpoint.tensors.end() && it->second.numel() == tensor.numel() &&
             std::memcmp(it->second.data(), tensor.data(), sizeof(float) * static_cast<size_t>(tensor.numel())) == 0;
    }
    if (!same) fail("loaded, but its tensors differ from the original's");
    ++tally.successes;
    return true;
  } catch (const InputError& e) {
    if (std::strchr(e.what(), '\n') || !e.what()[0]) fail(std::string("message not one line: ") + e.what());
  } catch (const IoError& e) {
    if (std::strchr(e.what(), '\n') || !e.what()[0]) fail(std::string("message not one line: ") + e.what());
  } catch (const std::exception& e) {
    fail(std::string("untyped or internal error: ") + e.what());
  }
  ++tally.refusals;
  return false;
}

#ifndef __SANITIZE_ADDRESS__
// Under AddressSanitizer the cap cannot work (its shadow memory fills the address space and
// its operator new aborts instead of throwing), so the sanitizer build checks every load's
// behaviour without the cap; the fuzz target's -malloc_limit_mb=1024 bounds allocations there.
uint64_t address_space_bytes() {
  long pages = 0;
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm) {
    if (std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
    std::fclose(statm);
  }
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}
#endif

void run_campaign(const fs::path& dir, Tally& tally) {
  const fs::path original_path = dir / "original.safetensors", path = dir / "mutant.safetensors";
  const std::string original = read_bytes(original_path);
  const std::map<std::string, Tensor> tensors = load_checkpoint(original_path).tensors;
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | static_cast<unsigned char>(original[size_t(i)]);

#ifndef __SANITIZE_ADDRESS__
  // The guard itself must hold: a 1.5 GB request has to fail under the limit.
  try {
    std::vector<char> big(size_t(3) << 29);
    big[big.size() - 1] = 1;
    std::snprintf(tally.failure, sizeof tally.failure, "the address-space limit did not stop a 1.5 GB allocation");
    return;
  } catch (const std::bad_alloc&) {
  }
#endif

  for (size_t cut = 0; cut < original.size(); ++cut) {
    write_bytes(path, original.substr(0, cut));
    ++tally.truncations;
    // A shorter file can never be the original, so every cut must be refused.
    if (load_once(path, tensors, tally, "truncated at " + std::to_string(cut)) && !tally.failure[0])
      std::snprintf(tally.failure, sizeof tally.failure, "truncated at %zu bytes: loaded anyway", cut);
  }
  // MG_MUTATION_SEED runs another campaign (a longer hunt); the default keeps CI repeatable.
  const char* seed = std::getenv("MG_MUTATION_SEED");
  std::mt19937_64 rng(seed ? std::strtoull(seed, nullptr, 10) : 20240611);
  for (int m = 0; m < kMutations; ++m) {
    write_bytes(path, mutate(original, 8 + header_bytes, rng));
    ++tally.mutations;
    load_once(path, tensors, tally, "mutation " + std::to_string(m));
  }
}

class CheckpointMutationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_dir("mutation");
    write_original(dir_ / "original.safetensors");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

}  // namespace

TEST_F(CheckpointMutationTest, EveryTruncationAndMutationLoadsIdenticallyOrIsRefusedInBoundedMemory) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
#ifndef __SANITIZE_ADDRESS__
    const uint64_t limit = address_space_bytes() + kAllocationLimit;
    const rlimit cap{limit, limit};
    ::setrlimit(RLIMIT_AS, &cap);
#endif
    ::alarm(120);  // a hang dies of SIGALRM
    Tally tally;
    try {
      run_campaign(dir_, tally);
    } catch (const std::exception& e) {
      std::snprintf(tally.failure, sizeof tally.failure, "campaign setup failed: %s", e.what());
    }
    const ssize_t written = ::write(pipe_fds[1], &tally, sizeof tally);
    ::_exit(written == static_cast<ssize_t>(sizeof tally) ? 0 : 3);
  }
  ::close(pipe_fds[1]);
  Tally tally;
  size_t got = 0;
  while (got < sizeof tally) {
    const ssize_t n = ::read(pipe_fds[0], reinterpret_cast<char*>(&tally) + got, sizeof tally - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the loading child died of signal " << WTERMSIG(status)
                                 << " (a crash, a hang past 120 s, or an allocation over the 1 GB cap)";
  ASSERT_EQ(WEXITSTATUS(status), 0);
  ASSERT_EQ(got, sizeof tally);
  EXPECT_STREQ(tally.failure, "");
  std::printf("[ counts   ] truncations %ld, mutations %ld, loads that succeeded identically %ld, refusals %ld\n",
              tally.truncations, tally.mutations, tally.successes, tally.refusals);
  EXPECT_EQ(tally.truncations, static_cast<long>(fs::file_size(dir_ / "original.safetensors")));
  EXPECT_EQ(tally.mutations, kMutations);
  EXPECT_EQ(tally.successes + tally.refusals, tally.truncations + tally.mutations);
  // Most mutations must be caught: a reader that accepted everything would fail here.
  EXPECT_GT(tally.refusals, tally.truncations + kMutations * 9 / 10);
}

// The command line turns every refusal into exit 2 and exactly one "mini-gpt: error:" line.
TEST_F(CheckpointMutationTest, CliAnswersMutatedCheckpointsWithOneErrorLineAndExitTwo) {
  const std::string original = read_bytes(dir_ / "original.safetensors");
  const fs::path text = dir_ / "text.txt";
  write_bytes(text, std::string("abc\nabcabc\nbca\ncab\nabcabcabc\n"));
  // The original evaluates fine, so the refusals below are the mutations' doing.
  test::CommandResult ok = test::run_mini_gpt({"eval", "--checkpoint", (dir_ / "original.safetensors").string(),
                                               "--text-file", text.string()}, dir_);
  ASSERT_EQ(ok.status, 0) << ok.err;

  Parsed p = split(original);
  json huge = p.header;
  std::mt19937_64 rng(5);
  const std::string victim = pick_tensor(huge, rng);
  huge[victim]["shape"] = {uint64_t(1) << 62, 4};
  json not_json = p.header;
  not_json["__metadata__"]["config"] = "{\"model\": ";
  std::string flipped = original;
  flipped[flipped.size() - 3] ^= 0x10;
  std::string long_length = original;
  long_length[6] = '\x7f';
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated", original.substr(0, original.size() / 2)},
      {"flipped_data_bit", flipped},
      {"huge_shape", join(huge.dump(), p.data)},
      {"config_not_json", join(not_json.dump(), p.data)},
      {"header_length_huge", long_length},
  };
  for (const auto& [name, bytes] : cases) {
    const fs::path path = dir_ / (name + ".safetensors");
    write_bytes(path, bytes);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"eval", "--checkpoint", path.string(), "--text-file", text.string()},
          std::vector<std::string>{"sample", "--checkpoint", path.string(), "--max-new-tokens", "5"}}) {
      const test::CommandResult r = test::run_mini_gpt(args, dir_);
      EXPECT_EQ(r.status, 2) << name << " " << args[0] << ": " << r.err;
      EXPECT_EQ(r.err.rfind("mini-gpt: error: ", 0), 0u) << name << ": " << r.err;
      EXPECT_NE(r.err.find(path.string()), std::string::npos) << name << ": " << r.err;
      ASSERT_FALSE(r.err.empty());
      EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << name << ": more than one line: " << r.err;
      EXPECT_EQ(r.out, "") << name;
    }
  }
}
