// inspect-heads --circuits' printout of a head's QK and OV circuits (interp/qk_ov.h).
#pragma once

#include <cstdint>
#include <string>

#include "interp/qk_ov.h"

namespace mg {

// The printout: both tables' top pairs, the copy score and the approximation note.
std::string format_circuits(const HeadCircuits& c, int64_t top);

}  // namespace mg
