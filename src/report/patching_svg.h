// inspect-heads --patch --svg FILE: the stream sweep as one heatmap, rows the blocks
// (hook_resid_pre of layer L), columns the positions with the clean text's symbols, each
// square the fraction of the clean logit difference restored by patching that one
// activation: white at 0, red towards 1 (and past it), blue below 0. Hovering a square
// shows its number.
#pragma once

#include <string>

#include "interp/patching.h"

namespace mg {

std::string patching_svg(const Patching& p);

}  // namespace mg
