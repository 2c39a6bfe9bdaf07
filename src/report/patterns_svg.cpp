// The SVG heatmaps of inspect-heads. Geometry: every head's cell has the same size; a
// square is `px` pixels, chosen from T so a 64-symbol text still fits a screen. Weights
// map linearly from 0 (white) to 1 (dark blue) on ColorBrewer's "Blues" ramp; masked keys
// (s > t) are drawn grey so a learner tells "forbidden" from "allowed but ignored".
#include "report/patterns_svg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "report/patterns_format.h"
#include "report/text.h"

namespace mg {
namespace {

constexpr const char* kFonts =
    "'Noto Sans CJK SC','Source Han Sans SC','PingFang SC','Microsoft YaHei','WenQuanYi Micro Hei',sans-serif";

std::string num(double v) { return format("%.6g", v); }

// Weight in [0,1] -> "#rrggbb" by linear interpolation between the 9 stops of "Blues".
std::string colour(double w) {
  static constexpr std::array<std::array<int, 3>, 9> stops = {{{247, 251, 255}, {222, 235, 247}, {198, 219, 239},
                                                              {158, 202, 225}, {107, 174, 214}, {66, 146, 198},
                                                              {33, 113, 181}, {8, 81, 156}, {8, 48, 107}}};
  const double x = std::clamp(w, 0.0, 1.0) * 8.0;
  const int i = std::min(7, static_cast<int>(x));
  const double f = x - i;
  int rgb[3];
  for (int k = 0; k < 3; ++k) rgb[k] = static_cast<int>(std::lround(stops[i][k] + f * (stops[i + 1][k] - stops[i][k])));
  return format("#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

std::string text_element(double x, double y, double size, const std::string& anchor, const std::string& body,
                         const std::string& extra = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + num(size) + "\" text-anchor=\"" + anchor +
         "\"" + extra + ">" + xml_escape(body) + "</text>\n";
}

}  // namespace

std::string patterns_svg(const Inspection& r) {
  const int64_t T = r.T;
  const double px = std::clamp(std::floor(480.0 / static_cast<double>(T)), 12.0, 32.0);  // one square
  const double font = std::max(9.0, std::round(px * 0.6));
  int label_columns = 1;  // widest symbol label, in terminal columns (a CJK symbol is 2)
  for (const auto& token : r.tokens) label_columns = std::max(label_columns, display_width(symbol_label(token)));
  const double label_w = label_columns * font * 0.6 + 8;   // room for the row labels
  const double title_h = 52, column_label_h = font + 8;
  const double cell_w = std::max(label_w + T * px, 330.0) + 30;
  const double cell_h = title_h + column_label_h + T * px + 24;

  // Grid: one row per inspected layer, one column per inspected head.
  std::map<int64_t, int> row_of, column_of;
  for (const auto& h : r.heads) row_of.emplace(h.layer, 0), column_of.emplace(h.head, 0);
  int n = 0;
  for (auto& [layer, row] : row_of) row = n++;
  n = 0;
  for (auto& [head, column] : column_of) column = n++;
  const double margin = 20, top = 96;
  const double width = 2 * margin + std::max(column_of.size() * cell_w, 560.0);
  const double height = top + row_of.size() * cell_h + margin;

  std::string shown;
  for (const auto& token : r.tokens) shown += symbol_label(token);
  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
         "\" viewBox=\"0 0 " + num(width) + " " + num(height) + "\" font-family=\"" + kFonts + "\">\n";
  svg += "<title>" + xml_escape("inspect-heads: " + shown) + "</title>\n";
  svg += "<style>rect.w{stroke:#ffffff;stroke-width:0.5}</style>\n";  // the squares' thin white grid
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  svg += text_element(margin, 28, 16, "start", "projected_weights of \u201c" + shown + "\u201d (" + std::to_string(T) +
                                                   " symbols)", " font-weight=\"bold\"");
  std::string loss_line = "rows: query position t \u00b7 columns: key position s \u00b7 each row sums to 1";
  if (r.loss) loss_line += " \u00b7 loss on the text " + num(std::round(*r.loss * 1e4) / 1e4) + " nats/symbol";
  svg += text_element(margin, 48, 12, "start", loss_line, " fill=\"#444444\"");

  // The colour scale: a gradient bar 0..1 and a grey swatch for masked keys.
  svg += "<defs><linearGradient id=\"scale\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">";
  for (int i = 0; i <= 8; ++i)
    svg += "<stop offset=\"" + num(i / 8.0) + "\" stop-color=\"" + colour(i / 8.0) + "\"/>";
  svg += "</linearGradient></defs>\n";
  svg += "<g class=\"scale\" transform=\"translate(" + num(margin) + ",60)\">\n";
  svg += "<rect x=\"0\" y=\"0\" width=\"240\" height=\"12\" fill=\"url(#scale)\" stroke=\"#888888\" stroke-width=\"0.5\"/>\n";
  for (double v : {0.0, 0.25, 0.5, 0.75, 1.0}) svg += text_element(240 * v, 26, 10, "middle", num(v));
  svg += "<rect x=\"270\" y=\"0\" width=\"12\" height=\"12\" fill=\"#d9d9d9\"/>\n";
  svg += text_element(288, 10.5, 11, "start", "masked: key after query (s > t), weight exactly 0");
  svg += "</g>\n";

  for (const HeadInspection& h : r.heads) {
    const double x0 = margin + column_of[h.head] * cell_w, y0 = top + row_of[h.layer] * cell_h;
    const std::string heading = head_name(h.layer, h.head) + " (layer " + std::to_string(h.layer) + ", head " +
                                std::to_string(h.head) + ")";
    svg += "<g class=\"cell\" transform=\"translate(" + num(x0) + "," + num(y0) + ")\">\n";
    svg += "<title>" + xml_escape(heading + ": " + summary_line(h.summary)) + "</title>\n";
    svg += text_element(0, 16, 14, "start", heading, " font-weight=\"bold\"");
    // The summary on two short lines, so a cell stays narrow.
    const HeadSummary& s = h.summary;
    svg += text_element(0, 32, 11, "start",
                        format("entropy %.2f nats \u00b7 reads offset %lld most (%.0f%%)", s.mean_entropy,
                               static_cast<long long>(s.top_offset), 100.0 * s.top_offset_share),
                        " fill=\"#333333\"");
    if (s.first_share && s.importance)
      svg += text_element(0, 46, 11, "start",
                          format("on position 0: %.2f \u00b7 importance %+.3f nats", *s.first_share, *s.importance),
                          " fill=\"#333333\"");

    const double mx = label_w, my = title_h + column_label_h;  // the matrix's top-left corner
    for (int64_t k = 0; k < T; ++k) {
      const std::string label = symbol_label(r.tokens[static_cast<size_t>(k)]);
      svg += text_element(mx + (k + 0.5) * px, my - 5, font, "middle", label);               // key (column)
      svg += text_element(mx - 5, my + (k + 0.5) * px + font * 0.35, font, "end", label);  // query (row)
    }
    svg += "<rect x=\"" + num(mx) + "\" y=\"" + num(my) + "\" width=\"" + num(T * px) + "\" height=\"" + num(T * px) +
           "\" fill=\"#d9d9d9\"/>\n";
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t k = 0; k <= t; ++k) {
        const double w = h.weight(t, k, T);
        svg += "<rect x=\"" + num(mx + k * px) + "\" y=\"" + num(my + t * px) + "\" width=\"" + num(px) +
               "\" height=\"" + num(px) + "\" fill=\"" + colour(w) + "\" class=\"w\"><title>" +
               xml_escape("query " + std::to_string(t) + " " + symbol_label(r.tokens[t]) + " \u2192 key " +
                          std::to_string(k) + " " + symbol_label(r.tokens[k]) + ": " + format("%.6f", w)) +
               "</title></rect>\n";
        if (px >= 26 && w >= 0.005) {  // big squares also print the weight
          svg += text_element(mx + (k + 0.5) * px, my + (t + 0.5) * px + 3, 8.5, "middle", format("%.2f", w),
                              w > 0.55 ? " fill=\"#ffffff\"" : " fill=\"#1a1a1a\"");
        }
      }
    }
    svg += "</g>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace mg
