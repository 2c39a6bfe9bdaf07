// The formation events' writers (report/formation_format.h).
#include "report/formation_format.h"

#include "report/explain_format.h"
#include "report/text.h"

namespace mg {
namespace {

using json = nlohmann::ordered_json;

std::string value_text(const std::optional<double>& v, const char* fmt) { return v ? format(fmt, *v) : "-"; }

// What a schedule key means, said once.
std::string schedule_sentence(const std::string& key) {
  if (key == "train.freeze_block0_qk_to_step") return "block 0's queries and keys are let go";
  if (key == "data.random_rows_from_step") return "rows starting anywhere join the batches";
  if (key == "data.early_stories_to_step") return "the early stories end; every story is drawn";
  return key;
}

// A kind's chain in a few words: "who: writer L3.H1, carrier L2.H0 (K), learned 0.98".
std::string chain_words(const KindChain& k) {
  std::string out = k.kind + ": writer " + (k.writer ? chain_head_name(*k.writer) : "none");
  out += k.carrier ? ", carrier " + chain_head_name(*k.carrier) + " (" + k.composition + ")" : ", no carrier";
  out += k.learned ? ", learned" : k.shortcut ? ", a shortcut" : ", not learned";
  return out + format(" %.3f", k.accuracy);
}

// The event's kind, when it is about one ("who distractors" -> "who").
std::string event_kind(const FormationEvent& e) {
  if (e.type != FormationType::accuracy) return "";
  return e.subject.substr(0, e.subject.find(' '));
}

std::string chain_lines(const std::optional<Explanation>& chain, int64_t step, const std::string& kind,
                        const char* when) {
  if (!chain) return "";
  std::string out;
  for (const KindChain& k : chain->kinds)
    if (kind.empty() || k.kind == kind)
      out += format("      chain %s (step %lld): ", when, static_cast<long long>(step)) + chain_words(k) + "\n";
  return out;
}

}  // namespace

const char* formation_type_name(FormationType type) {
  switch (type) {
    case FormationType::accuracy: return "accuracy";
    case FormationType::role_jump: return "role_jump";
    case FormationType::loss_bump: return "loss_bump";
    case FormationType::loss_plateau: return "loss_plateau";
    case FormationType::schedule: return "schedule";
  }
  return "";
}

std::string formation_headline(const FormationEvent& e) {
  const std::string values = value_text(e.before, "%.3f") + " -> " + value_text(e.after, "%.3f");
  switch (e.type) {
    case FormationType::accuracy:
      return e.subject + (e.rising ? " accuracy crossed " : " accuracy fell back under ") + format("%.2f", e.level) +
             " (" + values + ")";
    case FormationType::role_jump:
      return "head " + e.subject + " jumped (" + values + ")";
    case FormationType::loss_bump:
      return "validation loss rose (" + value_text(e.before, "%.4f") + " -> " + value_text(e.after, "%.4f") + ")";
    case FormationType::loss_plateau:
      return format("validation loss on a plateau from step %lld", static_cast<long long>(e.level)) +
             (e.after_step >= 0 && e.after_step == e.step ? ", ended" : ", lasting") + " (" +
             value_text(e.before, "%.4f") + " -> " + value_text(e.after, "%.4f") + ")";
    case FormationType::schedule:
      return schedule_sentence(e.subject) + " (" + e.subject + ")";
  }
  return "";
}

std::string format_formation_events(const std::vector<FormationEvent>& events, const std::string& run_dir) {
  std::string out = "formation events of " + run_dir + " (" + std::to_string(events.size()) + "):\n";
  if (events.empty()) return out + "  no events\n";
  for (const FormationEvent& e : events) {
    out += format("  step %7lld  %-12s  ", static_cast<long long>(e.step), formation_type_name(e.type)) +
           formation_headline(e) + "\n";
    if (!e.heads.empty()) {
      out += format("      changed most (step %lld -> %lld):", static_cast<long long>(e.before_step),
                    static_cast<long long>(e.after_step));
      for (const HeadChange& h : e.heads)
        out += "  " + head_name(h.layer, h.head) + " " + h.score + format(" %.2f -> %.2f", h.before, h.after) +
               (h.role_before != h.role_after ? " (" + h.role_before + " -> " + h.role_after + ")" : "");
      out += "\n";
    }
    const std::string kind = event_kind(e);
    out += chain_lines(e.chain_before, e.before_step, kind, "before");
    out += chain_lines(e.chain_after, e.after_step, kind, "after ");
  }
  return out;
}

json formation_events_json(const std::vector<FormationEvent>& events, const std::string& run_dir) {
  auto optional_number = [](const std::optional<double>& v) { return v ? json(round9(*v)) : json(nullptr); };
  auto optional_step = [](int64_t step) { return step >= 0 ? json(step) : json(nullptr); };
  json list = json::array();
  for (const FormationEvent& e : events) {
    json heads = json::array();
    for (const HeadChange& h : e.heads)
      heads.push_back({{"head", head_name(h.layer, h.head)}, {"score", h.score}, {"before", round9(h.before)},
                       {"after", round9(h.after)}, {"role_before", h.role_before}, {"role_after", h.role_after}});
    list.push_back({{"type", formation_type_name(e.type)},
                    {"step", e.step},
                    {"before_step", optional_step(e.before_step)},
                    {"after_step", optional_step(e.after_step)},
                    {"subject", e.subject},
                    {"before", optional_number(e.before)},
                    {"after", optional_number(e.after)},
                    {"level", round9(e.level)},
                    {"rising", e.rising},
                    {"headline", formation_headline(e)},
                    {"heads", std::move(heads)},
                    {"chain_before", e.chain_before ? json(explanation_json(*e.chain_before)) : json(nullptr)},
                    {"chain_after", e.chain_after ? json(explanation_json(*e.chain_after)) : json(nullptr)}});
  }
  return {{"run", run_dir}, {"events", std::move(list)}};
}

}  // namespace mg
