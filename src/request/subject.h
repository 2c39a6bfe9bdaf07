// The model a request reads and the probe sets it scores on: loaded here, so that no writer
// (report) and no transport (cli, serve) loads one.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "data/probe.h"
#include "data/vocab.h"
#include "nn/gpt.h"
#include "request/inspect_modes.h"
#include "request/inspect_request.h"

namespace mg {

// A model loaded for one request: from --checkpoint, or --config freshly initialised with
// --seed (else the config's train.seed: train's step 0).
struct LoadedSubject {
  Gpt model;
  Vocab vocab;
  std::string probe_path;  // the config's data.probe_path ("" when none)
  std::string source;      // "checkpoint X" or "config X, freshly initialised with seed S"
  Subject view() const { return Subject{&model, &vocab, probe_path, source, nullptr}; }
};
LoadedSubject load_subject(const InspectRequest& r);

// The probe set at PATH, refused (InputError) when not one of its items can be read by the
// model: each needs a prompt and an answer of the model's vocabulary, and a probe mode on
// such a set would print an empty table or "not learned" for nothing it scored.
std::vector<ProbeItem> readable_probe_set(const std::string& path, const Vocab& vocab);

// The probe set the role scores use: --probe, else the config's data.probe_path when it is
// still there (a checkpoint may outlive its data); none when neither names one.
std::vector<ProbeItem> role_probes(const InspectRequest& r, const Subject& s);

// What the server computes once for a model: the default view's roles and --roles' report
// on PROBES (named PROBE_NAME), none without; the composition scores.
// PROBES must outlive the cache (the server's, loaded once).
SubjectCache cache_for(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes,
                       const std::string& probe_name);

// --explain's chains on the server's probe set (CACHE's), found once per model; InputError
// when it has none.
const Explanation& cached_explanation(const Gpt& model, const Vocab& vocab, const SubjectCache& cache);

// --circuit's circuits on the server's probe set (CACHE's), found once per model at
// interp's default threshold with the answer swapped (/api/circuit reads neither
// --threshold nor --swap); InputError when it has none.
const EdgeCircuits& cached_edge_circuits(const Gpt& model, const Vocab& vocab, const SubjectCache& cache);

// Head roles over the probe prompts (PROBES, named PROBE_NAME), or, with no probe set, over
// TEXT alone when it is given and ABLATE is not asked; with ABLATE and a probe set, the
// causal columns too (MEAN: mean-ablation). RequestError when there is nothing to score.
RoleReport probe_role_report(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes,
                             const std::string& probe_name, std::u32string_view text, bool ablate, bool mean);

// heads.html of a finished run: the model of RUN_DIR/latest.safetensors on the first
// question of its config's probe set (the prompt's last block_size symbols), with the run's
// curves. Nothing when the config names no probe set or none of its prompts is in the
// vocabulary; BEFORE_COMPUTING (when given) is called first once a page will be made (the
// command line announces the wait). The caller writes it.
struct RunExplorerPage {
  std::filesystem::path path;  // RUN_DIR/heads.html
  std::string html;
};
std::optional<RunExplorerPage> run_explorer_page(const std::filesystem::path& run_dir,
                                                 const std::function<void()>& before_computing = {});

}  // namespace mg
