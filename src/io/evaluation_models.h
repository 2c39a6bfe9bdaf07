// The models a training run keeps at its evaluations (docs/checkpoint.md, "Every
// evaluation's model"): RUN_DIR/evals/step_NNNNNNN.safetensors, one per evaluation, the
// weights alone in float32 (no AdamW moments), a checkpoint every reader loads. They let
// an evaluation be looked at again after the run moved on: inspect-heads on one of them,
// the slider of `serve --run` and `inspect-heads --timeline`. train writes them; serve and
// the timeline only read this folder, through the names here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace mg {

inline constexpr const char* kEvaluationsFolder = "evals";

// RUN_DIR/evals/step_NNNNNNN.safetensors (the step zero-padded to 7 digits, more when larger).
std::filesystem::path evaluation_model_path(const std::filesystem::path& run_dir, int64_t step);

struct EvaluationModel {
  int64_t step = 0;
  std::filesystem::path path;
};

// The models in RUN_DIR/evals/, by step; none when the folder is absent. A name not of
// the form above (a writer's temporary ".step_….tmp.PID" among them) is not one.
std::vector<EvaluationModel> list_evaluation_models(const std::filesystem::path& run_dir);

// The step of an evaluation model's file name, or -1 when NAME is not one.
int64_t evaluation_model_step(const std::string& name);

}  // namespace mg
