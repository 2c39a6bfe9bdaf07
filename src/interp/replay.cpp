// One kept evaluation on the explorer's text (interp/replay.h): the functions the page's own
// model is shown with (inspect_heads, next_symbols, attribute_logits), so a step's numbers
// are those inspect-heads prints on that evaluation's model.
#include "interp/replay.h"

namespace mg {

ReplayStep replay_step(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what,
                       const std::vector<int64_t>& positions) {
  ReplayStep step;
  step.inspection = inspect_heads(model, vocab, text, what, {});
  for (int64_t p : positions) {
    step.next.push_back(next_symbols(model, vocab, text, {p, {}, {}, std::nullopt, std::nullopt}));
    step.attribution.push_back(attribute_logits(model, vocab, step.inspection.ids, {p, std::nullopt, std::nullopt}));
  }
  return step;
}

}  // namespace mg
