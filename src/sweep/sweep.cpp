#include "sweep/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "bench/bench.hpp"
#include "timing/ceilings.hpp"
#include "compile/compile.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"
#include "common/files.hpp"
#include "bench/profile.hpp"
#include "results/results.hpp"
#include "tune/tuning.hpp"
#include "launch/launcher.hpp"

namespace gemmlab {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

fs::path journal_path(const fs::path& dir) { return dir / "journal.jsonl"; }

// What the journal says so far: finished points with their records, and the point started last
// without a result (the one in flight when a worker died).
struct Journal {
  std::map<std::string, std::vector<nlohmann::ordered_json>> done;  // ordered: the columns keep their order
  std::string in_flight;
};

Journal read_journal(const fs::path& dir) {
  Journal j;
  std::ifstream in(journal_path(dir));
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::ordered_json entry;
    try {
      entry = nlohmann::ordered_json::parse(line);
    } catch (const json::parse_error&) {
      continue;  // the last line of a killed worker may be cut short
    }
    if (entry.contains("start")) {
      j.in_flight = entry["start"].get<std::string>();
    } else if (entry.contains("key")) {
      auto key = entry["key"].get<std::string>();
      j.done[key] = entry["records"].get<std::vector<nlohmann::ordered_json>>();
      if (key == j.in_flight) j.in_flight.clear();
    }
  }
  return j;
}

// One line per write, flushed at once: a worker may die at any moment.
void append_journal(const fs::path& dir, const nlohmann::ordered_json& entry) {
  std::ofstream out(journal_path(dir), std::ios::app);
  out << entry.dump() << "\n";
  out.flush();
  if (!out) throw RuntimeError("cannot append to " + journal_path(dir).string());
}

const ExperimentKernel kCublas{"cublas", nullptr, "", "cublas", {}, 0};
const ExperimentKernel& kernel_of(const Experiment& e, const SweepPoint& p) {
  return p.kernel < 0 ? kCublas : e.kernels[size_t(p.kernel)];
}

// A record for a point that produced none of its own (invalid, crashed, timed out).
Record status_record(const Experiment& e, const SweepPoint& pt, const std::string& status) {
  Record r;
  auto& k = kernel_of(e, pt);
  r.kernel = k.kernel;
  r.precision = k.kernel == "cublas-tf32" || k.kernel == "gemmlab-tf32" ? "tf32" : "fp32";
  if (pt.problem >= 0) r.problem = e.problems[size_t(pt.problem)];
  r.status = status;
  r.details = {{"params", k.params}, {"label", k.label}};
  return r;
}

nlohmann::ordered_json records_entry(const std::string& key, const std::vector<Record>& records) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (auto& r : records) rows.push_back(to_json(r));
  return {{"key", key}, {"records", rows}};
}

bool same_spec(const fs::path& file, const json& spec) {
  auto text = read_file(file);
  if (!text) return false;
  try {
    return json::parse(*text) == spec;
  } catch (const json::parse_error&) {
    return false;
  }
}

std::string format_duration(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, int(s) % 3600 / 60);
  return buf;
}

// Progress on a terminal: one line redrawn in place; elsewhere one line per finished point.
class Progress {
 public:
  Progress(std::ostream& os, int total, int done) : os_(os), total_(total), done_(done), start_done_(done) {
    tty_ = &os == &std::cout && isatty(STDOUT_FILENO);
  }
  void finished(const std::string& key, const std::vector<nlohmann::ordered_json>& records) {
    ++done_;
    if (tty_) return;
    std::string what;
    for (auto& r : records) {
      auto status = r.value("status", std::string());
      char buf[96];
      if (status == "ok" || status == "failed")
        std::snprintf(buf, sizeof buf, "%.1f GFLOP/s %s", r.value("gflops", 0.0), status.c_str());
      else
        std::snprintf(buf, sizeof buf, "%s", status.substr(0, 90).c_str());
      what += (what.empty() ? "" : "; ") + std::string(buf);
    }
    os_ << "[" << done_ << "/" << total_ << "] " << key << ": " << what << "\n" << std::flush;
  }
  void draw(const std::string& current) {
    if (!tty_) return;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    int run = done_ - start_done_;
    std::string eta = run > 0 ? "ETA " + format_duration(elapsed / run * (total_ - done_)) : "ETA --";
    const int width = 30;
    int filled = total_ ? width * done_ / total_ : width;
    std::string bar = std::string(size_t(filled), '#') + std::string(size_t(width - filled), '.');
    std::string line = "[" + bar + "] " + std::to_string(done_) + "/" + std::to_string(total_) + " " + eta + "  " + current;
    if (line.size() > 118) line = line.substr(0, 115) + "...";
    os_ << "\r" << line << std::string(line.size() < last_ ? last_ - line.size() : 0, ' ') << std::flush;
    last_ = line.size();
  }
  void end() {
    if (tty_) os_ << "\n";
  }

 private:
  std::ostream& os_;
  int total_, done_, start_done_;
  bool tty_ = false;
  size_t last_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

pid_t start_worker(const SweepOptions& o) {
  auto log = (o.out / "worker.log").string();
  pid_t pid = fork();
  if (pid < 0) throw RuntimeError("cannot start a sweep worker (fork failed)");
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so a timeout can kill it with anything it started
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    std::string file = o.file.string(), out = o.out.string();
    std::vector<const char*> argv = {o.executable.c_str(), "sweep", file.c_str(), "--out", out.c_str(), "--worker"};
    if (!o.metrics.empty()) argv.insert(argv.end(), {"--metrics", o.metrics.c_str()});
    argv.push_back(nullptr);
    execv(o.executable.c_str(), const_cast<char* const*>(argv.data()));
    _exit(127);
  }
  return pid;
}

std::string last_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

// Fault injection for the tests of isolation: GEMMLAB_SWEEP_FAULT="kind:text" makes the worker
// crash (abort), hang, or fault on the device (cuda) at the first point whose key contains text.
void inject_fault(const std::string& key, cudaStream_t stream) {
  const char* env = std::getenv("GEMMLAB_SWEEP_FAULT");
  if (!env) return;
  std::string spec = env;
  auto colon = spec.find(':');
  if (colon == std::string::npos || key.find(spec.substr(colon + 1)) == std::string::npos) return;
  auto kind = spec.substr(0, colon);
  if (kind == "crash") std::abort();
  if (kind == "hang")
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  if (kind == "cuda") {
    launch_fault(stream);
    GEMMLAB_CUDA(cudaStreamSynchronize(stream));
  }
}

}  // namespace

int sweep_worker(const SweepOptions& o) {
  Experiment e = load_experiment(o.file);
  auto journal = read_journal(o.out);
  auto points = sweep_points(e);
  auto dev = query_device(0);
  auto ceil = ceilings(dev, false);
  if (!fs::exists(o.out / "metadata.json")) {
    json meta = run_metadata(dev, ceil, e.timing, e.dist, e.seed, o.command_line);
    meta["experiment"] = e.spec;
    meta["experiment"]["name"] = e.name;
    write_file_atomic(o.out / "metadata.json", meta.dump(1) + "\n");
  }
  DeviceTimer timer(dev, e.timing);
  auto host_opts = e.timing;
  host_opts.min_samples = std::min(host_opts.min_samples, 3);  // OpenBLAS: seconds per sample at 8192
  auto db = TuningDb::load(default_tuning_db());
  const auto arch = arch_name(dev.cc_major, dev.cc_minor);

  // The other cores compile the points' kernels, in the order they come, while the GPU measures.
  CompileAhead ahead;
  for (auto& pt : points) {
    auto& k = kernel_of(e, pt);
    if (journal.done.count(pt.key) || pt.problem < 0 || !k.family || !k.invalid.empty()) continue;
    const Problem& p = e.problems[size_t(pt.problem)];
    try {
      auto params = k.params == "tuned" ? tuned_params(k.kernel, p, dev.name, arch, db).params : k.params;
      ahead.submit(kernel_request(*k.family, parse_params(*k.family, params), p, dev));
    } catch (const UsageError&) {
      // measured (and reported) as invalid when its turn comes
    }
  }

  const auto metrics = o.metrics.empty() ? std::vector<MetricDef>{} : parse_metrics(o.metrics);
  std::map<std::string, std::unique_ptr<GemmRunner>> runners;
  std::unique_ptr<ProblemSession> session;
  int session_problem = -2;
  for (auto& pt : points) {
    if (journal.done.count(pt.key)) continue;
    append_journal(o.out, {{"start", pt.key}});
    auto& k = kernel_of(e, pt);
    std::vector<Record> records;
    try {
      inject_fault(pt.key, timer.stream());
      if (pt.problem < 0) {
        std::ostringstream table;
        run_averaging(*e.averaging, e.dist, e.seed, ceil, timer, table, records);
      } else if (!k.invalid.empty()) {
        records.push_back(status_record(e, pt, "invalid: " + k.invalid));
      } else {
        const Problem& p = e.problems[size_t(pt.problem)];
        if (session_problem != pt.problem) {
          session.reset();
          session = std::make_unique<ProblemSession>(p, e.dist, e.seed * 1000003 + uint64_t(pt.problem), timer.stream());
          session_problem = pt.problem;
        }
        std::string params = k.params;
        if (k.family && params == "tuned") params = tuned_params(k.kernel, p, dev.name, arch, db).params;
        auto& runner = runners[k.kernel + " " + params];
        if (!runner) runner = make_runner({k.kernel, k.family, k.family ? parse_params(*k.family, params) : ParamValues{}});
        records.push_back(measure(*runner, *session, timer, host_opts, ceil));
        if (!metrics.empty()) attach_counters(records.back(), *runner, *session, metrics);
      }
    } catch (const UsageError& err) {
      records = {status_record(e, pt, std::string("invalid: ") + err.what())};
    } catch (const std::exception& err) {
      records = {status_record(e, pt, std::string("error: ") + err.what())};
      cudaGetLastError();
      // A fault (illegal address, launch failure) leaves the context unusable: record the
      // point, then let the parent start a fresh worker for the rest.
      if (cudaDeviceSynchronize() != cudaSuccess) {
        append_journal(o.out, records_entry(pt.key, records));
        return kExitWorkerLost;
      }
    }
    for (auto& r : records) r.details["label"] = k.label;
    append_journal(o.out, records_entry(pt.key, records));
  }
  return kExitOk;
}

SweepSummary write_sweep_results(const Experiment& e, const fs::path& dir) {
  auto journal = read_journal(dir);
  json meta = json::object();
  if (auto text = read_file(dir / "metadata.json")) meta = json::parse(*text);
  std::vector<nlohmann::ordered_json> rows;
  SweepSummary s;
  // Records keep the order of their fields (the CSV's columns).
  std::map<int, double> cublas_ms;  // per problem
  auto points = sweep_points(e);
  for (auto& pt : points)
    if (pt.problem >= 0 && kernel_of(e, pt).kernel == "cublas" && journal.done.count(pt.key))
      for (auto& r : journal.done[pt.key])
        if (r.value("status", "") == "ok") cublas_ms[pt.problem] = r.value("median_ms", 0.0);
  for (auto& pt : points) {
    auto it = journal.done.find(pt.key);
    if (it == journal.done.end()) continue;
    ++s.points;
    for (auto r : it->second) {
      auto status = r.value("status", std::string());
      if (pt.problem >= 0 && cublas_ms.count(pt.problem) && r.value("median_ms", 0.0) > 0)
        r["x_cublas"] = cublas_ms[pt.problem] / r["median_ms"].get<double>();
      if (status == "ok") ++s.ok;
      else if (status == "failed") ++s.failed;
      else if (status.rfind("invalid", 0) == 0) ++s.invalid;
      else if (status.rfind("unsupported", 0) == 0) ++s.unsupported;
      else ++s.errors;
      rows.push_back(r);
    }
  }
  nlohmann::ordered_json rows_json = nlohmann::ordered_json::array();
  for (auto& r : rows) rows_json.push_back(r);
  nlohmann::ordered_json out = {{"metadata", nlohmann::ordered_json(meta)}, {"results", rows_json}};
  write_file_atomic(dir / "results.json", out.dump(2) + "\n");
  write_file_atomic(dir / "results.csv", results_csv(meta, rows));
  return s;
}

SweepSummary run_sweep(const SweepOptions& o, std::ostream& progress) {
  Experiment e = load_experiment(o.file);
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (!fs::is_directory(o.out)) throw UsageError("cannot create the output folder " + o.out.string());
  auto spec_file = o.out / "experiment.json";
  if (o.fresh)
    for (auto* name : {"journal.jsonl", "metadata.json", "results.json", "results.csv", "worker.log"})
      fs::remove(o.out / name, ec);
  else if (fs::exists(spec_file) && !same_spec(spec_file, e.spec))
    throw UsageError(o.out.string() + " holds the results of a different experiment; use another --out, or --fresh to "
                                      "discard them");
  write_file_atomic(spec_file, e.spec.dump(1) + "\n");

  auto points = sweep_points(e);
  const int total = int(points.size());
  auto journal = read_journal(o.out);
  int done = 0;
  for (auto& p : points) done += int(journal.done.count(p.key));
  if (done > 0 && done < total) progress << "resuming: " << done << " of " << total << " points are done\n";
  Progress bar(progress, total, done);
  int fruitless = 0;  // workers in a row that finished no point
  while (done < total) {
    pid_t pid = start_worker(o);
    std::string current;
    auto started = std::chrono::steady_clock::now();
    int status = 0;
    bool timed_out = false;
    size_t seen = 0;
    for (;;) {
      pid_t r = waitpid(pid, &status, WNOHANG);
      auto now_journal = read_journal(o.out);
      for (auto& p : points)
        if (now_journal.done.count(p.key) && !journal.done.count(p.key)) {
          bar.finished(p.key, now_journal.done[p.key]);
          ++seen;
        }
      if (now_journal.in_flight != current) {
        current = now_journal.in_flight;
        started = std::chrono::steady_clock::now();
      }
      journal = std::move(now_journal);
      if (r == pid) break;
      double running = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (!current.empty() && running > o.point_timeout_s) {
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
        timed_out = true;
        break;
      }
      bar.draw(current);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    journal = read_journal(o.out);
    done = 0;
    for (auto& p : points) done += int(journal.done.count(p.key));
    if (done == total) break;
    if (WIFEXITED(status) && (WEXITSTATUS(status) == kExitNoDevice || WEXITSTATUS(status) == kExitUsage) && seen == 0) {
      bar.end();
      auto why = last_line(o.out / "worker.log");
      if (WEXITSTATUS(status) == kExitNoDevice) throw NoDeviceError();
      throw UsageError(why.empty() ? "the sweep worker refused the experiment" : why);
    }
    // The point in flight cost the worker its life: record why, and go on without it.
    if (!journal.in_flight.empty()) {
      auto pt = std::find_if(points.begin(), points.end(), [&](auto& p) { return p.key == journal.in_flight; });
      std::string why = timed_out ? "error: timed out after " + format_duration(o.point_timeout_s)
                        : WIFSIGNALED(status) ? "error: the worker died of signal " + std::to_string(WTERMSIG(status))
                                              : "error: the worker exited with code " + std::to_string(WEXITSTATUS(status));
      if (pt != points.end()) {
        auto rec = status_record(e, *pt, why);
        append_journal(o.out, records_entry(pt->key, {rec}));
        bar.finished(pt->key, {to_json(rec)});
        ++done;
        seen = 1;
      }
    }
    fruitless = seen ? 0 : fruitless + 1;
    if (fruitless >= 2) {
      bar.end();
      throw RuntimeError("the sweep worker fails before finishing any point: " + last_line(o.out / "worker.log") +
                         " (see " + (o.out / "worker.log").string() + ")");
    }
  }
  bar.end();
  return write_sweep_results(e, o.out);
}

}  // namespace gemmlab
