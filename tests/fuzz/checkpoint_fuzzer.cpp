// libFuzzer target: the checkpoint reader (safetensors header, metadata, names and
// shapes, data checksum). The input bytes are the whole file, handed to load_checkpoint
// through an in-memory file (fuzz::as_file). Checked: every input either
// loads into a consistent checkpoint or is refused with a one-line InputError naming
// the file; any other exception, a signal, a hang (libFuzzer -timeout) or an allocation
// over the limit (-malloc_limit_mb) is a failure.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "fuzz_support.h"
#include "io/checkpoint.h"
#include "model_spec/parameter_shapes.h"
#include "core/error.h"

namespace {

using mg::fuzz::expect;
using mg::fuzz::fail;

// What a loaded checkpoint promises its users (sample, eval, resume).
void check_loaded(const mg::Checkpoint& checkpoint) {
  try {
    mg::validate_config(checkpoint.config);
  } catch (const mg::InputError& e) {
    fail(std::string("loaded a checkpoint whose config fails validation: ") + e.what());
  }
  expect(static_cast<int64_t>(checkpoint.vocab.size()) == checkpoint.config.model.vocab_size,
         "vocab length differs from model.vocab_size");
  expect(checkpoint.step >= 0, "negative step");
  const auto expected = mg::expected_parameter_shapes(checkpoint.config.model);
  const size_t per_parameter = checkpoint.has_optimizer_state() ? 3 : 1;
  expect(checkpoint.tensors.size() == expected.size() * per_parameter, "tensor count differs from the model's");
  for (const auto& [name, shape] : expected) {
    auto it = checkpoint.tensors.find(name);
    expect(it != checkpoint.tensors.end(), "parameter " + name + " missing after a successful load");
    expect(it->second.shape() == shape, "parameter " + name + " has the wrong shape after a successful load");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = mg::fuzz::as_file(data, size);
  try {
    check_loaded(mg::load_checkpoint(path));
  } catch (const mg::InputError& e) {
    mg::fuzz::expect_one_line(e.what());
    expect(std::string(e.what()).rfind(path + ": ", 0) == 0, std::string("error does not name the file: ") + e.what());
  } catch (const std::exception& e) {
    fail(std::string("load_checkpoint threw something other than an InputError: ") + e.what());
  }
  return 0;
}
