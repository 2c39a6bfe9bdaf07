// inspect-heads --circuits --svg: a head's QK and OV tables (head_circuits.h) drawn.
#pragma once

#include <string>

#include "jobs/head_circuits.h"

namespace mg {

// The two V x V heatmaps side by side with symbol labels, a diverging colour scale each.
std::string circuits_svg(const HeadCircuits& c);

}  // namespace mg
