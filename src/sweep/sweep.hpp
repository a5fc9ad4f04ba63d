#pragma once
// `gemmlab sweep`: runs every point of an experiment, each verified and timed, into a folder.
//
// The points run in a worker process (the same executable), which appends each result to
// DIR/journal.jsonl as it finishes, after a line saying which point it starts. The parent shows
// progress and watches the worker: if it dies (a fault that loses the CUDA context, a crash) or a
// point runs past the time limit, the point in flight is recorded as an error and a new worker
// goes on from the next point. Rerunning the same command resumes from the journal. At the end
// DIR/results.json and DIR/results.csv are written (atomically) with the metadata of a bench run
// and the experiment itself.
#include <filesystem>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "experiment/experiment.hpp"

namespace gemmlab {

struct SweepOptions {
  std::filesystem::path file;  // the experiment
  std::filesystem::path out;   // the folder
  bool fresh = false;          // discard earlier results in `out` instead of resuming
  double point_timeout_s = 300;
  std::string executable;      // this program, to start workers with
  std::string metrics;         // hardware counters per point (parse_metrics); none when empty
  std::string command_line;
};

struct SweepSummary {
  int points = 0, ok = 0, failed = 0, invalid = 0, errors = 0, unsupported = 0;
};

// Runs (or resumes) the sweep; returns its summary. Throws UsageError for a bad experiment or an
// output folder holding another experiment's results.
SweepSummary run_sweep(const SweepOptions& o, std::ostream& progress);

// The worker's side: runs the points the journal does not have yet. Returns the exit code:
// 0 when all are done, kExitWorkerLost after recording a point that left the CUDA context unusable.
constexpr int kExitWorkerLost = 5;
int sweep_worker(const SweepOptions& o);

// Builds results.json and results.csv from the folder's journal (also what `run_sweep` ends with).
SweepSummary write_sweep_results(const Experiment& e, const std::filesystem::path& dir);

}  // namespace gemmlab
