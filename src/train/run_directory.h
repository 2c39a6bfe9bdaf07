// The run directory a training run writes (config.json, metrics.jsonl, the latest and
// best checkpoints): which folder it is, what is refused there so that no run is ever
// trained over, its lock, and the leftovers of a killed run (temporaries, metrics lines
// past the checkpoint it resumes from).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "io/dir_lock.h"

namespace mg {

// ".NAME.tmp.PID" of a run file (io/atomic_file.h; ".NAME.tmp" from earlier versions) or
// the ".write-test" probe: a write that a kill may have cut short, never a checkpoint.
bool is_temporary_file_name(const std::string& name);

// Where a run writes: a fresh run into OUT_DIR (--out) or else CONFIG_OUT_DIR; a resumed
// run into its checkpoint's own folder, or into an OUT_DIR that is new or empty (a branch
// of the run). Any other folder is refused (InputError).
std::filesystem::path choose_run_dir(const std::optional<std::filesystem::path>& resume,
                                     const std::optional<std::filesystem::path>& out_dir,
                                     const std::filesystem::path& config_out_dir);

// Makes DIR the run's: refuses a folder that holds another run's files, creates DIR and
// checks that it is writable, locks it (held while the result lives; checked again under
// the lock, as another process may have started meanwhile) and removes the temporaries a
// killed run left.
std::unique_ptr<DirectoryLock> open_run_dir(const std::filesystem::path& dir,
                                            const std::optional<std::filesystem::path>& resume);

// Keeps the lines of metrics.jsonl up to STEP: a run killed after its last checkpoint
// left lines that the resumed run is about to write again (and perhaps a last line cut
// short by the kill, which does not parse and is dropped). A line over 16 MB is dropped
// too, without being held in memory.
void truncate_metrics(const std::filesystem::path& path, int64_t step);

// Removes RUN_DIR/evals/step_N.safetensors for every N past STEP: a run killed after its
// last checkpoint kept evaluations that the resumed run takes again (the same weights
// bit for bit when nothing else changed; another max_steps or config would leave the
// folder holding two runs' models otherwise). The earlier ones stay.
void remove_later_evaluation_models(const std::filesystem::path& run_dir, int64_t step);

}  // namespace mg
