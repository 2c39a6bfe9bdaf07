// inspect-heads --circuits --svg: the QK and OV tables of one head as two V x V heatmaps
// side by side, symbols labelling rows and columns, each with its own diverging scale
// (blue negative, white 0, red positive, full colour at the table's largest |value|).
#include "report/qk_ov_svg.h"

#include <algorithm>
#include <cmath>

#include "report/text.h"

namespace mg {
namespace {

std::string num(double v) { return format("%.1f", v); }

// White at 0, towards red (positive) or blue (negative) by |v| / scale.
std::string colour(double v, double scale) {
  const double t = scale > 0 ? std::min(1.0, std::fabs(v) / scale) : 0.0;
  const int fade = static_cast<int>(std::lround(255.0 * (1.0 - t)));
  return v >= 0 ? format("#ff%02x%02x", fade, fade) : format("#%02x%02xff", fade, fade);
}

}  // namespace

std::string qk_ov_svg(const HeadCircuits& c) {
  const double px = 9, font = 8, margin = 40, title_h = 50;
  const double map = px * static_cast<double>(c.V), panel = margin + map + 30;
  const double width = 2 * panel + 20, height = title_h + margin + map + 30;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
                    "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
                    "\" font-family=\"Noto Sans CJK SC, Noto Sans, sans-serif\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  const std::vector<std::pair<std::string, const std::vector<double>*>> tables = {
      {"QK: row = query symbol, column = key symbol", &c.qk},
      {"OV: row = attended symbol, column = output logit", &c.ov}};
  for (size_t panel_index = 0; panel_index < tables.size(); ++panel_index) {
    const auto& [title, table] = tables[panel_index];
    double scale = 0;
    for (double v : *table) scale = std::max(scale, std::fabs(v));
    const double ox = 10 + panel * static_cast<double>(panel_index) + margin, oy = title_h + margin;
    const std::string heading = format("layer %lld head %lld %s (|max| %.3f)", static_cast<long long>(c.layer),
                                       static_cast<long long>(c.head), title.c_str(), scale);
    svg += "<text x=\"" + num(ox - margin) + "\" y=\"20\" font-size=\"12\" font-weight=\"bold\">" +
           xml_escape(heading) + "</text>\n";
    if (panel_index == 1) {
      const std::string line = format("copy score %+.3f, diagonal top-1 %.0f%%", c.copy_score, 100 * c.diagonal_top1);
      svg += "<text x=\"" + num(ox - margin) + "\" y=\"36\" font-size=\"11\">" + xml_escape(line) + "</text>\n";
    }
    for (int64_t a = 0; a < c.V; ++a) {
      const std::string label = xml_escape(symbol_label(c.symbols[a]));
      svg += "<text x=\"" + num(ox + (a + 0.5) * px) + "\" y=\"" + num(oy - 3) + "\" font-size=\"" + num(font) +
             "\" text-anchor=\"middle\">" + label + "</text>\n";
      svg += "<text x=\"" + num(ox - 3) + "\" y=\"" + num(oy + (a + 0.8) * px) + "\" font-size=\"" + num(font) +
             "\" text-anchor=\"end\">" + label + "</text>\n";
    }
    for (int64_t a = 0; a < c.V; ++a)
      for (int64_t b = 0; b < c.V; ++b)
        svg += "<rect x=\"" + num(ox + b * px) + "\" y=\"" + num(oy + a * px) + "\" width=\"" + num(px) +
               "\" height=\"" + num(px) + "\" fill=\"" + colour((*table)[a * c.V + b], scale) + "\"/>\n";
  }
  return svg + "</svg>\n";
}

}  // namespace mg
