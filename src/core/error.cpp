#include "core/error.h"

namespace mg {

void check_failed(const char* condition, const std::string& message, const char* file, int line) {
  throw InternalError(std::string("internal check failed at ") + file + ":" + std::to_string(line) +
                      ": " + condition + (message.empty() ? "" : ": " + message));
}

}  // namespace mg
