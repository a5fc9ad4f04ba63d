#include "tune/tuner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "bench/bench.hpp"
#include "timing/ceilings.hpp"
#include "compile/compile.hpp"
#include "results/results.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"
#include "kernels/family.hpp"
#include "tune/tuning.hpp"
#include "launch/launcher.hpp"

namespace gemmlab {

Strategy parse_strategy(const std::string& s) {
  if (s == "exhaustive") return Strategy::exhaustive;
  if (s == "random") return Strategy::random;
  if (s == "anneal") return Strategy::anneal;
  throw UsageError("unknown strategy '" + s + "' (exhaustive, random, anneal)");
}

std::string to_string(Strategy s) {
  return s == Strategy::exhaustive ? "exhaustive" : s == Strategy::random ? "random" : "anneal";
}

const Trial* TuneResult::best() const {
  const Trial* b = nullptr;
  for (auto& t : trials)
    if (t.status == "ok" && (!b || t.median_ms < b->median_ms)) b = &t;
  return b;
}

nlohmann::ordered_json TuneResult::to_json() const {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (auto& t : trials)
    rows.push_back({{"params", t.params}, {"status", t.status}, {"median_ms", t.median_ms}, {"gflops", t.gflops},
                    {"at_s", t.at_s}, {"prepare_s", t.prepare_s}, {"measure_s", t.measure_s},
                    {"compile_s", t.compile_s}, {"binary", t.binary}});
  nlohmann::ordered_json out = {{"metadata", nlohmann::ordered_json(metadata)},
                                {"space", space},
                                {"evaluated", trials.size()},
                                {"elapsed_s", elapsed_s},
                                {"compile_threads", compile_threads},
                                {"compile_s", compile_s},
                                {"prepare_s", prepare_s},
                                {"measure_s", measure_s}};
  if (auto* b = best()) out["best"] = {{"params", b->params}, {"median_ms", b->median_ms}, {"gflops", b->gflops}, {"at_s", b->at_s}};
  out["trials"] = rows;
  return out;
}

namespace {

// A point of the space with the parameters of `fixed` ("accum=fp64") set, replacing its own.
std::string with_fixed(const std::string& point, const std::string& fixed) {
  if (fixed.empty()) return point;
  auto pairs = [](const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string kv; std::getline(ss, kv, ',');)
      if (!kv.empty()) out.push_back(kv);
    return out;
  };
  auto name = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  std::set<std::string> held;
  for (auto& kv : pairs(fixed)) held.insert(name(kv));
  std::string out;
  for (auto& kv : pairs(point))
    if (!held.count(name(kv))) out += kv + ",";
  return out + fixed;
}

// Configurations that differ from `a` in exactly `d` parameters.
int differences(const ParamValues& a, const ParamValues& b) {
  int d = 0;
  for (auto& [k, v] : a) d += b.at(k) != v;
  return d;
}

}  // namespace

TuneResult tune(const TuneOptions& options, std::ostream& log) {
  TuneOptions o = options;
  const KernelFamily* f = find_family(o.family);
  if (!f) throw UsageError("unknown family '" + o.family + "'");
  if (f->op() != o.problem.op)
    throw UsageError(o.family + " is a " + to_string(f->op()) + " family; the problem is a " + to_string(o.problem.op));
  // A database that cannot be read is left alone, and said so before the search, not after.
  if (!o.db.empty())
    if (auto db = TuningDb::load(o.db); !db.problem().empty())
      throw UsageError(db.problem() + "; move it away or name another with --db");
  auto space = f->search_space();
  if (space.empty()) throw UsageError(o.family + " has an empty search space");
  // Held values can break a point's constraints (accum=fp64 doubles a block's partial sums in
  // shared memory): such points leave the search, counted, instead of ending it.
  std::vector<std::string> held_space;
  for (auto& s : space)
    if (auto p = with_fixed(s, o.fixed);
        accepts(*f, p) && std::find(held_space.begin(), held_space.end(), p) == held_space.end())
      held_space.push_back(p);
  // None left: the first point's own message (an unknown parameter, a value out of range).
  if (held_space.empty()) parse_params(*f, with_fixed(space.front(), o.fixed));
  if (held_space.size() < space.size())
    log << space.size() - held_space.size() << " of " << space.size() << " configurations break a constraint with "
        << o.fixed << ": left out\n";
  space = std::move(held_space);
  std::vector<ParamValues> values;
  for (auto& s : space) values.push_back(parse_params(*f, s));

  auto dev = query_device(0);
  auto ceil = ceilings(dev, false);
  if (o.strategy != Strategy::exhaustive && o.budget_s <= 0) {
    o.budget_s = kDefaultBudgetS;
    log << "budget: " << o.budget_s << " s (--budget to change it)\n";
  }
  TuneResult result;
  result.space = int(space.size());
  result.metadata = run_metadata(dev, ceil, o.timing, Distribution::uniform, o.seed, o.command_line);
  result.metadata["tune"] = {{"family", o.family}, {"problem", describe(o.problem)}, {"strategy", to_string(o.strategy)},
                             {"budget_s", o.budget_s}, {"space", space.size()}};
  DeviceTimer timer(dev, o.timing);
  ProblemSession session(o.problem, Distribution::uniform, o.seed, timer.stream());
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // The next evaluation starts only if one of average length still ends within the budget.
  auto out_of_time = [&] {
    if (o.budget_s <= 0) return false;
    double per_trial = result.trials.empty() ? 0.0 : elapsed() / double(result.trials.size());
    return elapsed() + per_trial > o.budget_s;
  };

  // The search is compile-bound (NVRTC ~1 s per configuration, measuring ~0.4 s): the other cores
  // compile the configurations coming next while the GPU measures this one.
  CompileAhead ahead(o.compile_threads);
  auto request = [&](size_t i) { return kernel_request(*f, values[i], o.problem, dev); };
  result.compile_threads = ahead.threads();

  std::map<size_t, double> measured;  // index → median ms (infinity when it did not pass)
  auto evaluate = [&](size_t i) {
    Trial t;
    t.params = space[i];
    try {
      auto runner = make_family_runner(*f, values[i]);
      // Waiting for (or doing) the compile is part of the search's cost; shown apart from the
      // measurement, and NVRTC's own time apart from both.
      auto before = elapsed();
      if (runner->unsupported(o.problem).empty()) runner->prepare(o.problem);
      t.prepare_s = elapsed() - before;
      auto rec = measure(*runner, session, timer, o.timing, ceil);
      t.measure_s = elapsed() - before - t.prepare_s;
      t.compile_s = rec.details.value("compile_s", 0.0);
      t.binary = rec.details.value("binary", "");
      t.status = rec.status;
      t.median_ms = rec.timing.ms.median;
      t.gflops = rec.gflops;
    } catch (const UsageError& e) {
      t.status = std::string("unsupported: ") + e.what();
    } catch (const RuntimeError& e) {
      t.status = std::string("error: ") + e.what();
    }
    t.at_s = elapsed();
    measured[i] = t.status == "ok" ? t.median_ms : INFINITY;
    char buf[64];
    std::snprintf(buf, sizeof buf, "[%3zu/%zu %6.1fs] ", result.trials.size() + 1, space.size(), t.at_s);
    log << buf << t.params << ": ";
    if (t.status == "ok")
      log << t.gflops << " GFLOP/s (" << t.binary << ", waited " << int(t.prepare_s * 1000) << " ms, measured "
          << int(t.measure_s * 1000) << " ms)\n";
    else log << t.status << "\n";
    log.flush();
    result.trials.push_back(t);
    return measured[i];
  };

  std::mt19937_64 rng(o.seed);
  std::vector<size_t> order(space.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (o.strategy != Strategy::exhaustive) std::shuffle(order.begin(), order.end(), rng);
  for (size_t i : order) ahead.submit(request(i));

  if (o.strategy != Strategy::anneal) {
    for (size_t i : order) {
      if (out_of_time()) break;
      evaluate(i);
    }
  } else {
    // Phase 1, a quarter of the budget: random configurations, so that the walk starts in a good
    // region (single steps cannot cross between regions of coupled parameters: tile, warp and
    // vpt change together). Phase 2: annealing from the best one over neighbours that differ in
    // one or two parameters.
    auto neighbours = [&](size_t i) {
      std::vector<size_t> out;
      for (size_t j = 0; j < values.size(); ++j)
        if (j != i && !measured.count(j) && differences(values[i], values[j]) <= 2) out.push_back(j);
      return out;
    };
    std::uniform_real_distribution<double> uniform(0, 1);
    size_t next_fresh = 0;  // the random order: the exploration, then restarts
    size_t current = order[0];
    double current_ms = INFINITY;
    while (!out_of_time() && next_fresh < order.size() &&
           (result.trials.size() < 3 || elapsed() < 0.25 * o.budget_s)) {
      size_t i = order[next_fresh++];
      double ms = evaluate(i);
      if (ms < current_ms) current = i, current_ms = ms;
    }
    while (!out_of_time() && measured.size() < space.size()) {
      auto near = neighbours(current);
      size_t candidate;
      if (near.empty()) {  // every neighbour is known: restart from a random unmeasured point
        while (measured.count(order[next_fresh])) ++next_fresh;
        candidate = order[next_fresh];
      } else {
        candidate = near[std::uniform_int_distribution<size_t>(0, near.size() - 1)(rng)];
      }
      // The walk's next steps are among the new current point's neighbours: compile those first.
      double ms = evaluate(candidate);
      if (ms < current_ms || near.empty())
        for (size_t j : neighbours(candidate)) ahead.prefer(request(j));
      double temperature = 0.05 * std::max(0.0, 1.0 - elapsed() / o.budget_s);
      bool accept = !std::isinf(ms) &&
                    (near.empty() || std::isinf(current_ms) || ms <= current_ms ||
                     (temperature > 0 && uniform(rng) < std::exp(-std::log(ms / current_ms) / temperature)));
      if (accept) {
        current = candidate;
        current_ms = ms;
      }
    }
  }
  result.elapsed_s = elapsed();
  for (auto& t : result.trials) {
    result.compile_s += t.compile_s;
    result.prepare_s += t.prepare_s;
    result.measure_s += t.measure_s;
  }

  if (auto* b = result.best(); b && !o.db.empty()) {
    auto db = TuningDb::load(o.db);
    TuningEntry e;
    e.gpu = dev.name;
    e.arch = arch_name(dev.cc_major, dev.cc_minor);
    e.family = o.family;
    e.params = b->params;
    e.shape_class = shape_class(o.problem);
    e.shape = std::to_string(o.problem.m) + "x" + std::to_string(o.problem.n) + "x" + std::to_string(o.problem.k);
    e.gflops = b->gflops;
    e.median_ms = b->median_ms;
    e.strategy = to_string(o.strategy);
    e.evaluated = int(result.trials.size());
    e.search_s = result.elapsed_s;
    e.date = utc_now();
    e.commit = build_commit();
    db.put(e);
    db.save(o.db);
  }
  return result;
}

}  // namespace gemmlab
