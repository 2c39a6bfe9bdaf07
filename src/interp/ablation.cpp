// Head ablation: the heads' mean outputs (captured in the forward), "L.H" parsing, and
// the per-head probe-accuracy drops that inspect-heads --roles prints beside each role.
#include "interp/ablation.h"

#include "core/error.h"
#include "inference/evaluate.h"
#include "interp/attribution.h"
#include "interp/trace.h"

namespace mg {

std::vector<std::vector<float>> head_output_means(const Gpt& model, const std::vector<std::vector<int32_t>>& texts) {
  const ModelConfig& c = model.config();
  const int64_t L = c.n_layer, H = c.n_head, d = c.head_width();
  std::vector<std::vector<double>> sums(static_cast<size_t>(L * H), std::vector<double>(static_cast<size_t>(d), 0.0));
  int64_t positions = 0;
  NoGradGuard no_grad;
  for (const auto& ids : texts) {
    if (ids.empty()) continue;
    const int64_t T = static_cast<int64_t>(ids.size());
    ForwardHooks hooks;
    for (int64_t l = 0; l < L; ++l) hooks.record(hook::z(l));
    model.forward(ids, 1, T, {.hooks = &hooks});
    for (int64_t l = 0; l < L; ++l) {
      const float* z = hooks[hook::z(l)].data();  // [1,H,T,d]
      for (int64_t h = 0; h < H; ++h)
        for (int64_t t = 0; t < T; ++t)
          for (int64_t j = 0; j < d; ++j) sums[l * H + h][j] += z[(h * T + t) * d + j];
    }
    positions += T;
  }
  std::vector<std::vector<float>> means(sums.size(), std::vector<float>(static_cast<size_t>(d), 0.0f));
  for (size_t i = 0; i < sums.size(); ++i)
    for (int64_t j = 0; j < d; ++j)
      means[i][j] = positions ? static_cast<float>(sums[i][j] / static_cast<double>(positions)) : 0.0f;
  return means;
}

std::vector<HeadAblation> parse_ablations(const std::vector<std::string>& specs, const ModelConfig& c,
                                          const std::vector<std::vector<float>>* means) {
  std::vector<HeadAblation> out;
  for (const std::string& spec : specs) {
    const auto [layer, head] = [&] {
      try {
        return parse_head_name(spec, "ablate");
      } catch (const InputError& e) {  // "ablate \"x\" is not a head: ..."
        throw ArgumentError("ablate", std::string(e.what()).substr(6));
      }
    }();
    if (layer >= c.n_layer || head >= c.n_head)
      throw ArgumentError("ablate", " " + spec + " is out of range: the model has " + std::to_string(c.n_layer) +
                       " layers x " + std::to_string(c.n_head) + " heads, valid L0.H0..L" + std::to_string(c.n_layer - 1) +
                       ".H" + std::to_string(c.n_head - 1));
    for (const HeadAblation& a : out)
      if (a.layer == layer && a.head == head) throw ArgumentError("ablate", " " + spec + " is given twice");
    HeadAblation a;
    a.layer = layer;
    a.head = head;
    if (means) a.value = (*means)[static_cast<size_t>(layer * c.n_head + head)];
    out.push_back(std::move(a));
  }
  return out;
}

void add_ablation_drops(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes, bool mean,
                        RoleReport& report) {
  const ModelConfig& c = model.config();
  std::vector<std::vector<float>> means;
  if (mean) means = head_output_means(model, probe_texts(vocab, probes, c.block_size));
  const ProbeScore intact = score_probe(model, vocab, probes);
  const double base = intact.accuracy();
  report.base_accuracy = base;
  for (size_t k = 0; k < intact.kinds.size(); ++k)
    report.base_accuracy_by_kind.emplace_back(intact.kinds[k], intact.kind_accuracy(k));
  report.ablation = mean ? "mean" : "zero";
  for (HeadRoleScores& h : report.heads) {
    HeadAblation a;
    a.layer = h.layer;
    a.head = h.head;
    if (mean) a.value = means[static_cast<size_t>(h.layer * c.n_head + h.head)];
    const std::vector<HeadAblation> one{a};
    const ProbeScore ablated = score_probe(model, vocab, probes, EvalShare{}, one);
    h.accuracy_drop = base - ablated.accuracy();
    h.accuracy_drop_by_kind.clear();
    for (size_t k = 0; k < ablated.kinds.size(); ++k)
      h.accuracy_drop_by_kind.emplace_back(ablated.kinds[k], intact.kind_accuracy(k) - ablated.kind_accuracy(k));
  }
}

void add_probe_ablation(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes, bool mean,
                        RoleReport& report) {
  add_ablation_drops(model, vocab, probes, mean, report);
  add_direct_logits(attribute_probe(model, vocab, probes), report);
}

RoleReport probe_role_report(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes,
                             const std::string& probe_name, std::u32string_view text, bool ablate, bool mean) {
  RoleOptions options;
  options.probes = probes.empty() ? nullptr : &probes;
  if (!probes.empty()) {
    options.texts = probe_texts(vocab, probes, model.config().block_size);
    options.texts_description = std::to_string(options.texts.size()) + " probe prompts (" + probe_name + ")";
  } else if (!text.empty() && !ablate) {
    options.texts = {vocab.encode(text, "--text")};
    options.texts_description = "the --text alone (no probe set: give --probe FILE or --text-file FILE)";
  } else {
    throw InputError("--roles needs texts to score: --probe FILE, --text-file FILE, or a checkpoint whose config "
                     "names data.probe_path");
  }
  RoleReport report = score_head_roles(model, vocab, options);
  if (ablate && !probes.empty()) add_probe_ablation(model, vocab, probes, mean, report);
  return report;
}

}  // namespace mg
