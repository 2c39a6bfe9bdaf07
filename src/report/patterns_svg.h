// inspect-heads --svg: one standalone SVG picture of an Inspection, a grid of heatmaps
// (rows: layers, columns: heads), each the head's [T,T] projected_weights with the text's
// symbols on both axes, a title with its layer, head and summary, and one colour scale
// for the whole picture. Hovering a square in a browser shows its exact weight.
#pragma once

#include <string>

#include "interp/patterns.h"

namespace mg {

// The whole SVG document (UTF-8; symbols are text, XML-escaped). Each head is one
// <g class="cell"> element.
std::string patterns_svg(const Inspection& r);

}  // namespace mg
