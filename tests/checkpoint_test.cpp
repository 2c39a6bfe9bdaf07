// The mini-gpt checkpoint: a bit-exact save/load round trip, AdamW moments, the PyTorch
// reference's file (no data_sha256, a partial config) loading with known values, and the
// refusals, checked to happen before any tensor data is read: each bad file below also
// has a corrupted data byte, so a reader that got as far as the data would report the
// checksum instead of the fault the test expects.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "model_spec/parameter_shapes.h"
#include "core/error.h"

namespace fs = std::filesystem;
using namespace mg;
using nlohmann::json;

namespace {

using TensorList = std::vector<std::pair<std::string, Tensor>>;

Config tiny_config(const std::string& position = "rope") {
  Config c;
  c.model.vocab_size = 5;
  c.model.n_layer = 1;
  c.model.n_embd = 8;
  c.model.n_head = 2;
  c.model.block_size = 8;
  c.model.position = parse_position(position).value();
  return c;
}

const std::vector<std::string> kVocab = {"。", "小", "丁", "a", "\""};

// Every parameter of the config, filled with distinct deterministic values.
TensorList make_parameters(const ModelConfig& model, const std::string& prefix = "", float offset = 0.0f) {
  TensorList out;
  float next = offset;
  for (const auto& [name, shape] : expected_parameter_shapes(model)) {
    Tensor t = Tensor::empty(shape);
    for (int64_t i = 0; i < t.numel(); ++i) t[i] = std::sin(next += 0.37f) * 0.02f;
    out.emplace_back(prefix + name, t);
  }
  return out;
}

std::vector<std::pair<std::string, const Tensor*>> view(const TensorList& list) {
  std::vector<std::pair<std::string, const Tensor*>> out;
  for (const auto& [name, tensor] : list) out.emplace_back(name, &tensor);
  return out;
}

std::map<std::string, std::string> valid_metadata(const Config& config) {
  return {{"format", "mini-gpt"},
          {"format_version", "1"},
          {"config", config_to_json(config).dump()},
          {"vocab", json(kVocab).dump()},
          {"step", "7"}};
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mg_checkpoint_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes a raw safetensors file, then flips its last data byte so its checksum fails.
  fs::path write_corrupted(const std::map<std::string, std::string>& metadata, const TensorList& tensors) {
    const fs::path path = dir_ / "bad.safetensors";
    write_safetensors(path, metadata, view(tensors));
    std::string bytes = read_bytes(path);
    bytes.back() ^= 0x40;
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size());
    return path;
  }
  // load_checkpoint(path) must refuse with "PATH: " + message exactly.
  void expect_refused(const fs::path& path, const std::string& message) {
    try {
      load_checkpoint(path);
      ADD_FAILURE() << "no error, expected " << message;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), path.string() + ": " + message);
    }
  }

  fs::path dir_;
};

}  // namespace

TEST_F(CheckpointTest, SaveLoadRoundTripIsBitExact) {
  for (const std::string position : {"rope", "learned"}) {
    Config config = tiny_config(position);
    config.train.lr = 3e-4;
    config.data.path = "/corpus/text.txt";
    const TensorList parameters = make_parameters(config.model);
    const fs::path path = dir_ / "latest.safetensors";
    save_checkpoint(path, config, kVocab, 1234, view(parameters), {{"rng", "12 34"}, {"best_val_loss", "1.5"}});

    const Checkpoint loaded = load_checkpoint(path);
    EXPECT_EQ(config_to_json(loaded.config), config_to_json(config));
    EXPECT_EQ(loaded.vocab, kVocab);
    EXPECT_EQ(loaded.step, 1234);
    EXPECT_EQ(loaded.metadata.at("rng"), "12 34");
    EXPECT_EQ(loaded.metadata.at("best_val_loss"), "1.5");
    EXPECT_EQ(loaded.metadata.at("format"), "mini-gpt");
    EXPECT_FALSE(loaded.has_optimizer_state());
    ASSERT_EQ(loaded.tensors.size(), parameters.size());
    for (const auto& [name, tensor] : parameters) {
      const Tensor& back = loaded.tensors.at(name);
      ASSERT_EQ(back.shape(), tensor.shape()) << name;
      EXPECT_EQ(std::memcmp(back.data(), tensor.data(), tensor.numel() * sizeof(float)), 0) << name;
    }
  }
}

TEST_F(CheckpointTest, AcceptsAdamMomentsForEveryParameter) {
  const Config config = tiny_config();
  TensorList tensors = make_parameters(config.model);
  for (auto& t : make_parameters(config.model, "optim.exp_avg.", 1.0f)) tensors.push_back(t);
  for (auto& t : make_parameters(config.model, "optim.exp_avg_sq.", 2.0f)) tensors.push_back(t);
  const fs::path path = dir_ / "train.safetensors";
  save_checkpoint(path, config, kVocab, 3, view(tensors));
  const Checkpoint loaded = load_checkpoint(path);
  EXPECT_TRUE(loaded.has_optimizer_state());
  EXPECT_EQ(loaded.tensors.size(), 3 * expected_parameter_shapes(config.model).size());
  const Tensor& moment = loaded.tensors.at("optim.exp_avg_sq.head.weight");
  const Tensor& expected = tensors[tensors.size() - 1].second;
  EXPECT_EQ(std::memcmp(moment.data(), expected.data(), expected.numel() * sizeof(float)), 0);
}

TEST_F(CheckpointTest, LoadsThePyTorchReferenceFixtureWithItsValues) {
  // tests/fixtures/reference_tiny.safetensors, rewritten bit for bit (from the repository's root) by
  //   /usr/bin/python3 scripts/torch_reference.py write-checkpoint --config tests/fixtures/reference_tiny.config.json --vocab-text 小丁拿着红色的苹果。 --seed 1 --init torch-nn --no-data-sha256 --out tests/fixtures/reference_tiny.safetensors
  // model {n_layer 1, n_embd 8, n_head 2, block_size 8}, train {batch_size 4}, vocab from
  // "小丁拿着红色的苹果。"; no data_sha256, no data section in its config. The command prints
  // the values checked below as tok_emb_first_bits, tok_emb_sum and abs_sum.
  const Checkpoint c = load_checkpoint(fs::path(MINI_GPT_SOURCE_DIR) / "tests/fixtures/reference_tiny.safetensors");
  EXPECT_EQ(c.config.model.vocab_size, 10);
  EXPECT_EQ(c.config.model.n_embd, 8);
  EXPECT_EQ(c.config.model.n_layer, 1);
  EXPECT_EQ(c.config.train.batch_size, 4);
  EXPECT_EQ(c.config.train.lr, 1e-3);  // absent keys take the defaults
  EXPECT_EQ(c.config.data.path, "");
  EXPECT_EQ(c.step, 0);
  ASSERT_EQ(c.vocab.size(), 10u);
  EXPECT_EQ(c.vocab[0], "。");
  EXPECT_EQ(c.vocab[1], "丁");
  EXPECT_EQ(c.tensors.size(), 16u);
  // Bit patterns and sums the reference reports (write-checkpoint's output, numpy in float64).
  const Tensor& tok_emb = c.tensors.at("tok_emb.weight");
  uint32_t first[3];
  std::memcpy(first, tok_emb.data(), sizeof first);
  EXPECT_EQ(first[0], 3168751559u);
  EXPECT_EQ(first[1], 3157572754u);
  EXPECT_EQ(first[2], 3147918169u);
  double tok_sum = 0, abs_sum = 0;
  for (float x : tok_emb.span()) tok_sum += x;
  for (const auto& [name, t] : c.tensors)
    for (float x : t.span()) abs_sum += std::fabs(x);
  EXPECT_NEAR(tok_sum, -0.14829144354553137, 1e-12);
  EXPECT_NEAR(abs_sum, 36.833161447620114, 1e-9);  // write-checkpoint's "abs_sum"
  EXPECT_EQ(c.tensors.at("ln_f.weight")[0], 1.0f);
}

TEST_F(CheckpointTest, RefusesAMissingTensorBeforeReadingData) {
  const Config config = tiny_config();
  TensorList tensors = make_parameters(config.model);
  tensors.erase(tensors.begin() + 3);  // blocks.0.attn.q_proj.weight
  expect_refused(write_corrupted(valid_metadata(config), tensors),
                 "tensor blocks.0.attn.q_proj.weight is missing (expected shape [8,8])");
}

TEST_F(CheckpointTest, RefusesAnUnknownTensorBeforeReadingData) {
  const Config config = tiny_config();
  TensorList tensors = make_parameters(config.model);
  tensors.emplace_back("blocks.1.ln1.weight", Tensor::zeros({8}));
  expect_refused(write_corrupted(valid_metadata(config), tensors),
                 "unknown tensor blocks.1.ln1.weight: the config's model has no such parameter");
  tensors.pop_back();
  tensors.emplace_back("optim.exp_avg.pos_emb.weight", Tensor::zeros({8, 8}));  // rope has no pos_emb
  expect_refused(write_corrupted(valid_metadata(config), tensors),
                 "unknown tensor optim.exp_avg.pos_emb.weight (pos_emb.weight is not a parameter): the config's "
                 "model has no such parameter");
}

// Found by the mutation test: a name holding a line feed (JSON "\n") split the message.
TEST_F(CheckpointTest, ControlBytesInATensorNameKeepTheMessageOnOneLine) {
  const Config config = tiny_config();
  TensorList tensors = make_parameters(config.model);
  tensors.emplace_back("blocks.0.at\n.q_proj.weight", Tensor::zeros({8, 8}));
  expect_refused(write_corrupted(valid_metadata(config), tensors),
                 "unknown tensor blocks.0.at?.q_proj.weight: the config's model has no such parameter");
}

TEST_F(CheckpointTest, RefusesAWrongShapeBeforeReadingData) {
  const Config config = tiny_config();
  TensorList tensors = make_parameters(config.model);
  tensors.back().second = Tensor::zeros({6, 8});  // head.weight is [V,D] = [5,8]
  expect_refused(write_corrupted(valid_metadata(config), tensors), "tensor head.weight has shape [6,8], expected [5,8]");
}

TEST_F(CheckpointTest, RefusesMomentsForOnlySomeParameters) {
  const Config config = tiny_config();
  TensorList tensors = make_parameters(config.model);
  for (auto& t : make_parameters(config.model, "optim.exp_avg.")) tensors.push_back(t);
  expect_refused(write_corrupted(valid_metadata(config), tensors),
                 "tensor optim.exp_avg_sq.tok_emb.weight is missing: the file holds AdamW moments, so it needs both "
                 "for every parameter");
}

TEST_F(CheckpointTest, RefusesOtherFormatsAndVersions) {
  const Config config = tiny_config();
  const TensorList tensors = make_parameters(config.model);
  auto metadata = valid_metadata(config);
  metadata["format"] = "gguf";
  expect_refused(write_corrupted(metadata, tensors), "__metadata__.format is \"gguf\", expected \"mini-gpt\"");
  metadata["format"] = "mini-gpt";
  metadata["format_version"] = "2";
  expect_refused(write_corrupted(metadata, tensors), "__metadata__.format_version is \"2\", expected \"1\"");
  metadata.erase("format");
  expect_refused(write_corrupted(metadata, tensors), "__metadata__ lacks \"format\" (not a mini-gpt checkpoint?)");
}

TEST_F(CheckpointTest, RefusesBadConfigVocabAndStepNamingTheCheckpoint) {
  const Config config = tiny_config();
  const TensorList tensors = make_parameters(config.model);
  auto metadata = valid_metadata(config);
  json bad_config = config_to_json(config);
  bad_config["model"]["n_head"] = 3;
  metadata["config"] = bad_config.dump();
  expect_refused(write_corrupted(metadata, tensors),
                 "__metadata__.config: model.n_embd = 8 must be divisible by model.n_head = 3");
  metadata["config"] = "{\"model\": ";
  expect_refused(write_corrupted(metadata, tensors),
                 "__metadata__.config: invalid JSON at line 1 column 11: syntax error while parsing value - "
                 "unexpected end of input; expected '[', '{', or a literal");

  metadata = valid_metadata(config);
  metadata["vocab"] = R"(["a", "b"])";
  expect_refused(write_corrupted(metadata, tensors),
                 "__metadata__.vocab holds 2 symbols, the config's model.vocab_size is 5");
  metadata["vocab"] = R"(["a", "b", "c", "a", "d"])";
  expect_refused(write_corrupted(metadata, tensors), "__metadata__.vocab repeats the symbol \"a\" at ids 0 and 3");
  metadata["vocab"] = R"(["a", "bc", "c", "d", "e"])";
  expect_refused(write_corrupted(metadata, tensors), "__metadata__.vocab entry 1 must be a one-symbol string, found \"bc\"");

  metadata = valid_metadata(config);
  metadata["step"] = "-1";
  expect_refused(write_corrupted(metadata, tensors), "__metadata__.step must be a non-negative integer, found \"-1\"");
}

TEST_F(CheckpointTest, RefusesAHugeLayerCountWithoutBuildingItsNameList) {
  Config config = tiny_config();
  const TensorList tensors = make_parameters(config.model);
  json huge = config_to_json(config);
  huge["model"]["n_layer"] = 1000000;
  auto metadata = valid_metadata(config);
  metadata["config"] = huge.dump();
  expect_refused(write_corrupted(metadata, tensors),
                 "the config's model.n_layer = 1000000 needs at least 12000000 tensors, the file holds 16");
}

TEST_F(CheckpointTest, SavingTensorsThatDoNotFitTheConfigIsAnInternalError) {
  const Config config = tiny_config();
  TensorList tensors = make_parameters(config.model);
  tensors.pop_back();
  EXPECT_THROW(save_checkpoint(dir_ / "x.safetensors", config, kVocab, 0, view(tensors)), InternalError);
  EXPECT_FALSE(fs::exists(dir_ / "x.safetensors"));
}
