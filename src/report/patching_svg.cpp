// The patching heatmap (report/patching_svg.h).
#include "report/patching_svg.h"

#include <algorithm>
#include <cmath>

#include "report/text.h"

namespace mg {

std::string patching_svg(const Patching& p) {
  const double px = std::clamp(std::floor(720.0 / static_cast<double>(p.T)), 12.0, 36.0), font = 12;
  const double left = 70, top = 70, width = left + p.T * px + 20, height = top + p.n_layer * px + 40;
  std::string svg = format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                           "font-family=\"'Noto Sans CJK SC','Source Han Sans SC',sans-serif\">\n",
                           width, height);
  svg += format("<text x=\"10\" y=\"22\" font-size=\"14\">%s</text>\n",
                xml_escape("restored fraction of the logit difference " + symbol_label(p.answer_symbol) + " - " +
                           symbol_label(p.against_symbol) + ", patching hook_resid_pre at one position")
                    .c_str());
  for (int64_t t = 0; t < p.T; ++t)
    svg += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
                  left + (t + 0.5) * px, top - 8, font, xml_escape(symbol_label(p.clean_tokens[t])).c_str());
  for (int64_t l = 0; l < p.n_layer; ++l) {
    svg += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"end\">L%lld</text>\n", left - 6,
                  top + (l + 0.5) * px + font / 3, font, static_cast<long long>(l));
    for (int64_t t = 0; t < p.T; ++t) {
      const double v = p.streams[l * p.T + t];
      const int fade = static_cast<int>(std::lround(255.0 * (1.0 - std::min(1.0, std::fabs(v)))));
      const std::string fill = v >= 0 ? format("#ff%02x%02x", fade, fade) : format("#%02x%02xff", fade, fade);
      svg += format("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"#ddd\">"
                    "<title>L%lld, position %lld: %.4f</title></rect>\n",
                    left + t * px, top + l * px, px, px, fill.c_str(), static_cast<long long>(l),
                    static_cast<long long>(t), v);
    }
  }
  return svg + "</svg>\n";
}

}  // namespace mg
