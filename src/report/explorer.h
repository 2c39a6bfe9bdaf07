// The head explorer (inspect-heads --html FILE, and heads.html at the end of `train`): one
// self-contained HTML page that shows every head of a model on one text. Everything the
// page shows is computed here, in C++, and embedded as one JSON object; the page's
// JavaScript only draws and looks numbers up (no model arithmetic in the browser). The
// page's HTML, CSS and JavaScript are real files under src/report/explorer/, compiled in.
//
// What the JSON holds (by head: layer-major, index layer * H + head):
//   the text's symbols; each head's projected_weights [T,T] (the lower triangle, row t
//   holding keys 0..t, each weight in 24 bits: weights_base64) with its summary; the role scores
//   and, with a probe set, each head's ablation cost (interp/roles.h, interp/ablation.h);
//   worked traces (interp/trace.h) at the positions traced_positions() chooses; each head's
//   QK and OV tables in the symbol basis (interp/qk_ov.h; 8 bits an entry, for drawing,
//   with the top pairs exact); with a run directory, the
//   curves of its metrics.jsonl.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/probe.h"
#include "data/vocab.h"
#include "nn/gpt.h"
#include "interp/patterns.h"
#include "interp/replay.h"
#include "report/run_curves.h"

namespace mg {

struct ExplorerOptions {
  std::string source;                         // how the model was made, shown in the page
  const std::vector<ProbeItem>* probes = nullptr;  // role texts and ablation costs; null: "no probe"
  std::string probe_name;                     // the probe file, shown in the page
  bool mean_ablation = false;
  std::optional<int64_t> position;            // a query position to trace besides the defaults
  std::optional<std::filesystem::path> run_dir;  // a run directory whose metrics.jsonl is drawn
  const ExplorerReplay* replay = nullptr;     // with run_dir: its kept evaluations, for the step slider
};

// A weight w in [0, 1] is stored as round(w * kWeightSteps) in 3 bytes: steps of 6e-8,
// so a weight read back is within 3e-8 of the float (the page shows 7 decimals), in 3/4
// of float32's bytes. WEIGHTS as such, little-endian, then base64.
inline constexpr int64_t kWeightSteps = (int64_t{1} << 24) - 1;
std::string weights_base64(const std::vector<float>& weights);
// Head H's projected_weights as the page holds them: row t of [T,T] with keys 0..t, the
// lower triangle, T(T+1)/2 weights, as weights_base64.
std::string lower_triangle_base64(const HeadInspection& h, int64_t T);

// The query positions with a precomputed trace for every head: all of them when the
// model and text are small (n_layer * n_head * T <= kAllPositionsBudget), else the last
// one and POSITION (when given), in increasing order.
inline constexpr int64_t kAllPositionsBudget = 1024;
std::vector<int64_t> traced_positions(int64_t n_layer, int64_t n_head, int64_t T, std::optional<int64_t> position);

// The page's data. InputError as inspect_heads() for the text (WHAT names it), for a
// POSITION outside the text, and for a run directory without a readable metrics.jsonl.
nlohmann::ordered_json explorer_data(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what,
                                     const ExplorerOptions& options);


// The whole page: the template with its CSS, JavaScript and DATA filled in.
std::string explorer_html(const nlohmann::ordered_json& data);

// The words, drawing code and style the explorer's page shares with `mini-gpt serve`'s live
// page (src/report/page/words.js then draw.js, and page.css), for the server to put into its own.
std::string_view shared_page_js();
std::string_view shared_page_css();
// The step slider's markup (page/replay.html: the slider, its marks, the curves, the events),
// for the page's <!--@REPLAY_TRACK@--> marker.
std::string_view shared_replay_html();

// The line inspect-heads --html prints once the page of DATA (PAGE_BYTES long) is written
// to PATH: its size, the model, the text, the traced positions and the probe set
// (PROBE_NAME, "" for none).
std::string explorer_written_line(const std::string& path, size_t page_bytes, const nlohmann::ordered_json& data,
                                  const std::string& probe_name);

}  // namespace mg
