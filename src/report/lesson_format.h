// `mini-gpt lesson 12`'s printout and JSON (interp/lesson.h): each of the lesson's sections
// in its order, its arrays, and every number the lesson prints beside mini-gpt's.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "interp/lesson.h"

namespace mg {

// The sections with their arrays, then each one's checks: what, the lesson's number,
// mini-gpt's, and "agrees" or "DIFFERS"; the last line counts them.
std::string format_lesson12(const Lesson12& lesson);

// {"lesson": 12, "one_row": {...}, "split": {...}, "random": {...}, "parameters": {...},
//  "indivisible": {...}, "questions": {...},
//  "checks": [{"section", "what", "lesson" [..], "mini_gpt" [..], "tolerance", "agrees"}],
//  "checks_total", "checks_agreeing"}; a tensor is {"shape" [..], "values" [..]} (row-major),
//  every float rounded to 9 significant digits.
nlohmann::ordered_json lesson12_json(const Lesson12& lesson);

}  // namespace mg
