// The model a request reads, its probe sets and the server's once-per-model results
// (request/subject.h).
#include "request/subject.h"

#include <filesystem>

#include "core/error.h"
#include "core/random.h"
#include "data/corpus.h"
#include "data/utf8.h"
#include "inference/model_store.h"
#include "interp/ablation.h"
#include "interp/circuit_edges.h"
#include "interp/explain.h"
#include "interp/patterns.h"
#include "report/explorer.h"
#include "report/roles_format.h"

namespace mg {

LoadedSubject load_subject(const InspectRequest& r) {
  if (r.checkpoint.empty() == r.config.empty())
    throw RequestError({"inspect-heads needs exactly one of ", ArgumentName{"checkpoint"}, " CKPT or ",
                        ArgumentName{"config"}, " FILE (with ", ArgumentName{"seed"}, " S)"});
  if (r.seed && r.config.empty())
    throw RequestError({ArgumentName{"seed"}, " S goes with ", ArgumentName{"config"}, " FILE: a checkpoint has its weights"});
  if (!r.checkpoint.empty()) {
    LoadedModel loaded = load_model(r.checkpoint);
    return LoadedSubject{std::move(loaded.model), std::move(loaded.vocab), loaded.config.data.probe_path,
                         "checkpoint " + r.checkpoint};
  }
  // As `train` starts: the vocabulary from the config's corpus, docs/model.md's initialisation
  // drawn from Rng(seed); without a seed, the config's train.seed, so this is train's step 0.
  Config config = load_config(r.config);
  Corpus corpus = load_corpus(config.data.path, config.data.val_fraction, config.model.block_size);
  config.model.vocab_size = corpus.vocab.size();
  LoadedSubject subject{Gpt(config.model), std::move(corpus.vocab), config.data.probe_path,
                        "config " + r.config + ", freshly initialised" +
                            (r.seed ? " with seed " + std::to_string(*r.seed) : std::string())};
  Rng rng(r.seed ? *r.seed : config.train.seed);
  subject.model.initialize(rng);
  return subject;
}

std::vector<ProbeItem> readable_probe_set(const std::string& path, const Vocab& vocab) {
  std::vector<ProbeItem> items = load_probe_set(path);
  for (const ProbeItem& item : items) {
    const std::optional<std::vector<int32_t>> ids = vocab.find_all(item.prompt);
    if (ids && !ids->empty() && vocab.find(item.answer)) return items;
  }
  throw InputError("probe file " + path + ": none of its " + std::to_string(items.size()) +
                   " items can be read by this model (a prompt and an answer all in its vocabulary of " +
                   std::to_string(vocab.size()) + " symbols)");
}

std::vector<ProbeItem> role_probes(const InspectRequest& r, const Subject& s) {
  if (r.probe) return readable_probe_set(*r.probe, *s.vocab);
  if (!s.probe_path.empty() && std::filesystem::exists(s.probe_path)) return load_probe_set(s.probe_path);
  return {};
}

RoleReport probe_role_report(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes,
                             const std::string& probe_name, std::u32string_view text, bool ablate, bool mean) {
  RoleOptions options;
  options.probes = probes.empty() ? nullptr : &probes;
  if (!probes.empty()) {
    options.texts = probe_texts(vocab, probes, model.config().block_size);
    options.texts_description = probe_prompts_description(options.texts.size(), probe_name);
    options.texts_source = "probe";
    options.texts_probe = probe_name;
  } else if (!text.empty() && !ablate) {
    options.texts = {encode_for_model(model, vocab, text, "text")};
    options.texts_description = text_alone_description();
    options.texts_source = "text";
  } else {
    throw RequestError({ArgumentName{"roles"}, " needs texts to score: ", ArgumentName{"probe"}, " FILE, ",
                        ArgumentName{"text_file"}, " FILE, or a checkpoint whose config names data.probe_path"});
  }
  RoleReport report = score_head_roles(model, vocab, options);
  if (ablate && !probes.empty()) add_probe_ablation(model, vocab, probes, mean, report);
  return report;
}

SubjectCache cache_for(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes,
                       const std::string& probe_name) {
  SubjectCache cache;
  if (!probes.empty()) {
    // As inspect-heads computes them: the default view's roles without the ablation
    // columns, --roles' with them (zero-ablation).
    cache.pattern_roles = probe_role_report(model, vocab, probes, probe_name, U"", false, false);
    cache.roles = probe_role_report(model, vocab, probes, probe_name, U"", true, false);
  }
  cache.composition = composition_scores(model);
  cache.probes = &probes;
  return cache;
}

namespace {

// ONCE's result, computed by COMPUTE on CACHE's probe set at the first call and kept (an
// InputError kept as its message, and thrown again at every call); InputError "no probe
// set: ..." (FOUND says what is found on one) when the server has none.
template <class Result, class Compute>
const Result& computed_once(SubjectCache::Once<Result>& once, const SubjectCache& cache, const char* found,
                            const Compute& compute) {
  std::call_once(once.once, [&] {
    if (!cache.probes || cache.probes->empty()) {
      once.error = std::string("no probe set: ") + found +
                   " (start serve with --probe FILE, or a checkpoint whose config names data.probe_path)";
      return;
    }
    try {
      once.result = compute(*cache.probes);
    } catch (const InputError& e) {
      once.error = e.what();
    }
  });
  if (!once.result) throw InputError(once.error);
  return *once.result;
}

}  // namespace

const Explanation& cached_explanation(const Gpt& model, const Vocab& vocab, const SubjectCache& cache) {
  return computed_once(*cache.explanation, cache, "the chains are found on one",
                       [&](const std::vector<ProbeItem>& probes) { return explain_chains(model, vocab, probes); });
}

const EdgeCircuits& cached_edge_circuits(const Gpt& model, const Vocab& vocab, const SubjectCache& cache) {
  return computed_once(*cache.edge_circuits, cache, "the circuit is found on its pairs",
                       [&](const std::vector<ProbeItem>& probes) {
                         return find_probe_circuits(model, vocab, probes, CircuitOptions{});
                       });
}

std::optional<RunExplorerPage> run_explorer_page(const std::filesystem::path& run_dir,
                                                 const std::function<void()>& before_computing) {
  LoadedModel loaded = load_model(run_dir / "latest.safetensors");
  if (loaded.config.data.probe_path.empty()) return std::nullopt;
  const std::vector<ProbeItem> probes = load_probe_set(loaded.config.data.probe_path);
  const std::vector<std::vector<int32_t>> prompts = probe_texts(loaded.vocab, probes, loaded.model.config().block_size);
  if (prompts.empty()) return std::nullopt;
  if (before_computing) before_computing();
  std::u32string text;
  for (int32_t id : prompts.front()) text += decode_utf8(loaded.vocab.symbol(id), "vocabulary");
  ExplorerOptions options;
  options.source = (run_dir / "latest.safetensors").string() + " (the end of the run)";
  options.probes = &probes;
  options.probe_name = loaded.config.data.probe_path;
  options.run_dir = run_dir;
  return RunExplorerPage{run_dir / "heads.html",
                         explorer_html(explorer_data(loaded.model, loaded.vocab, text, "probe question", options))};
}

}  // namespace mg
