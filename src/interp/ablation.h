// Causal evidence for what a head does: replace its output (w @ v, before the out
// projection) and see what the probe loses. Zero-ablation sets the output to 0; since 0
// may be far from anything the head ever outputs, mean-ablation replaces it by its mean
// over a set of texts (every position of every text), which removes what the head says
// about this input while keeping its typical output.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/probe.h"
#include "data/vocab.h"
#include "interp/roles.h"
#include "nn/gpt.h"

namespace mg {

// Each head's mean output over TEXTS (each at most block_size ids): [L*H] vectors of [d],
// index layer * H + head.
std::vector<std::vector<float>> head_output_means(const Gpt& model, const std::vector<std::vector<int32_t>>& texts);

// "L.H" strings (eval --ablate) as ablations; with MEANS (from head_output_means) each
// head is replaced by its mean, else by zeros. InputError names a bad or out-of-range
// spec and the valid range; a head given twice is an error too.
std::vector<HeadAblation> parse_ablations(const std::vector<std::string>& specs, const ModelConfig& config,
                                          const std::vector<std::vector<float>>* means);

// Fills every head's accuracy_drop in REPORT (and base_accuracy, ablation): the probe
// accuracy of the intact model minus that with the head ablated, one head at a time.
// MEAN: mean-ablation over the probe prompts, else zero-ablation.
void add_ablation_drops(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes, bool mean,
                        RoleReport& report);

// --roles' causal columns: the accuracy drops (add_ablation_drops) and each head's direct
// logit on the probe (interp/attribution.h's add_direct_logits).
void add_probe_ablation(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes, bool mean,
                        RoleReport& report);

}  // namespace mg
