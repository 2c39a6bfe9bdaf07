// The names of a run's evaluation models (io/evaluation_models.h).
#include "io/evaluation_models.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"

namespace mg {
namespace {

constexpr const char* kPrefix = "step_";
constexpr const char* kSuffix = ".safetensors";

}  // namespace

std::filesystem::path evaluation_model_path(const std::filesystem::path& run_dir, int64_t step) {
  char name[48];
  std::snprintf(name, sizeof name, "%s%07lld%s", kPrefix, static_cast<long long>(step), kSuffix);
  return run_dir / kEvaluationsFolder / name;
}

int64_t evaluation_model_step(const std::string& name) {
  const std::string prefix = kPrefix, suffix = kSuffix;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() < 7 || digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return c >= '0' && c <= '9';
      }))
    return -1;
  return std::stoll(digits);
}

std::vector<EvaluationModel> list_evaluation_models(const std::filesystem::path& run_dir) {
  namespace fs = std::filesystem;
  std::vector<EvaluationModel> models;
  const fs::path dir = run_dir / kEvaluationsFolder;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return models;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const int64_t step = evaluation_model_step(it->path().filename().string());
    if (step >= 0 && it->is_regular_file(ec)) models.push_back({step, it->path()});
  }
  if (ec) throw IoError("cannot list " + dir.string() + ": " + ec.message());
  std::sort(models.begin(), models.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  return models;
}

}  // namespace mg
