// inspect-heads --svg: one standalone SVG picture of an Inspection, a grid of heatmaps
// (rows: layers, columns: heads), each the head's [T,T] projected_weights with the text's
// symbols on both axes, a title with its layer, head and summary, and one colour scale
// for the whole picture. Hovering a square in a browser shows its exact weight.
#pragma once

#include <filesystem>
#include <string>

#include "jobs/inspect.h"

namespace mg {

// The whole SVG document (UTF-8; symbols are text, XML-escaped). Each head is one
// <g class="cell"> element.
std::string heatmap_svg(const Inspection& r);

// Writes TEXT to PATH atomically: a hidden ".NAME.tmp.PID" beside it, then a rename over
// PATH, so an error leaves no partial file. IoError names the path and the OS reason.
void write_text_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace mg
