// `mini-gpt lesson 12`: lesson 12's examples rerun with mini-gpt's ops, each number the lesson
// prints beside mini-gpt's (interp/lesson.h computes, report/lesson_format.h writes).
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "core/error.h"
#include "interp/lesson.h"
#include "report/lesson_format.h"

namespace mg::cli {

namespace {
struct LessonOptions {
  std::string lesson;
  std::string format = "table";
  ComputeOptions compute;
};
}  // namespace

Run add_lesson_command(CLI::App& app) {
  auto options = std::make_shared<LessonOptions>();
  CLI::App* cmd = app.add_subcommand(
      "lesson", "Rerun a lesson's examples with mini-gpt's ops and print its numbers beside mini-gpt's (lesson 12)");
  cmd->add_option("LESSON", options->lesson, "The lesson's number: 12 (multi-head attention)")->required();
  cmd->add_option("--format", options->format, "table (default) or json");
  options->compute.add_to(*cmd);
  cmd->footer("Lesson 12's toy (x = 0..11 as [1,3,4], torch.manual_seed(42), four nn.Linear(4, 4, bias=False)) is "
              "rebuilt in C++; no checkpoint is read. Exit 1 when a number disagrees with the lesson.");

  return [options]() {
    if (options->lesson != "12")
      throw InputError("lesson \"" + options->lesson + "\": mini-gpt reruns lesson 12 (multi-head attention) only");
    if (options->format != "table" && options->format != "json")
      throw InputError("--format must be table or json, found \"" + options->format + "\"");
    options->compute.apply();
    const Lesson12 lesson = run_lesson12();
    if (options->format == "json")
      std::printf("%s\n", lesson12_json(lesson).dump().c_str());
    else
      std::fputs(format_lesson12(lesson).c_str(), stdout);
    if (!lesson.all_agree()) throw Error("a number of lesson 12 disagrees with mini-gpt's (marked DIFFERS above)");
    return kExitOk;
  };
}

}  // namespace mg::cli
