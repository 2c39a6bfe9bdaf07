// inspect-heads --circuits --svg: a head's QK and OV tables (interp/qk_ov.h) drawn.
#pragma once

#include <string>

#include "interp/qk_ov.h"

namespace mg {

// The two V x V heatmaps side by side with symbol labels, a diverging colour scale each.
std::string qk_ov_svg(const HeadCircuits& c);

}  // namespace mg
