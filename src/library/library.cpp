#include "gemmlab/gemmlab.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include <nvtx3/nvToolsExt.h>

#include "compile/compile.hpp"
#include "device/device.hpp"
#include "kernels/family.hpp"
#include "tune/tuning.hpp"
#include "launch/launcher.hpp"
#include "library/dispatch.hpp"
#include "library/workspace.hpp"

namespace gemmlab {

namespace {

// Everything a plan depends on. Alpha and beta are not: they travel in the arguments.
struct PlanKey {
  int device;
  Op op;
  Layout layout;
  Trans trans_a, trans_b;
  int64_t m, n, k, lda, ldb, ldc;
  unsigned aligned;  // bit i: operand i starts 16-byte aligned (it selects the kernel variant)
  uint64_t stream;   // stream_key: the stream a plan's workspace belongs to
  MathMode math;
  // beta != 0: C is read, which the dispatcher prices (the tiled epilogues read and write C row by
  // row); a plan made for beta = 0 may be the wrong kernel for beta = 1 (tk-8192x8192x8: 0.50x).
  bool reads_c = false;
  bool operator==(const PlanKey&) const = default;
};

struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const {
    size_t h = std::hash<int64_t>()(k.m);
    for (int64_t x : {k.n, k.k, k.lda, k.ldb, k.ldc, int64_t(k.aligned), int64_t(k.device), int64_t(k.op),
                      int64_t(k.layout), int64_t(k.trans_a), int64_t(k.trans_b), int64_t(k.stream), int64_t(k.math),
                      int64_t(k.reads_c)})
      h = h * 1000003u ^ std::hash<int64_t>()(x);
    return h;
  }
};

// A stream's identity for its workspace. cudaStreamPerThread is one handle for a different stream
// in every host thread: its key includes the thread.
uint64_t stream_key(cudaStream_t s) {
  const uint64_t handle = uint64_t(reinterpret_cast<uintptr_t>(s));
  if (s != cudaStreamPerThread) return handle;
  return handle ^ (uint64_t(std::hash<std::thread::id>()(std::this_thread::get_id())) << 8);
}

unsigned alignment_bits(const void* a, const void* b, const void* c) {
  auto al = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0 ? 1u : 0u; };
  return al(a) | al(b) << 1 | al(c) << 2;
}

// A first call may come inside a stream capture (CUDA graphs, PyTorch's among them): global
// capture mode forbids cudaMalloc on the capturing thread, and a memset on the legacy stream
// would join the capture. Planning and workspace changes run in relaxed mode, and zeroing uses a
// stream of its own that no capture waits on.
class RelaxedCapture {
 public:
  RelaxedCapture() { GEMMLAB_CUDA(cudaThreadExchangeStreamCaptureMode(&old_)); }
  ~RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&old_); }

 private:
  cudaStreamCaptureMode old_ = cudaStreamCaptureModeRelaxed;
};

// Each call is an NVTX range in the domain "gemmlab" named by its plan (Plan::range), so a
// timeline (nsys) shows which kernel ran for which call. Without a tool attached a push is a call
// through NVTX's no-op table; GEMMLAB_NVTX=0 skips even that.
class CallRange {
 public:
  explicit CallRange(const std::string& name) {
    static const nvtxDomainHandle_t domain = enabled() ? nvtxDomainCreateA("gemmlab") : nullptr;
    if (!domain) return;
    nvtxEventAttributes_t e{};
    e.version = NVTX_VERSION;
    e.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    e.messageType = NVTX_MESSAGE_TYPE_ASCII;
    e.message.ascii = name.c_str();
    nvtxDomainRangePushEx(domain, &e);
    domain_ = domain;
  }
  ~CallRange() {
    if (domain_) nvtxDomainRangePop(domain_);
  }
  CallRange(const CallRange&) = delete;
  CallRange& operator=(const CallRange&) = delete;

 private:
  static bool enabled() {
    const char* v = std::getenv("GEMMLAB_NVTX");
    return !v || std::string(v) != "0";
  }
  nvtxDomainHandle_t domain_ = nullptr;
};

void zero_aside(void* p, size_t bytes) {
  cudaStream_t s = nullptr;
  GEMMLAB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaError_t e = cudaMemsetAsync(p, 0, bytes, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  GEMMLAB_CUDA(e);
}

size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

// A launch plan and what it needs of its stream's workspace: floats for split-K's partial sums,
// then the packed and the staged operands (each from a 256-byte boundary), and arrival counters.
// A vector route's plan is a GEMV plan whose matrix may be the call's B: `swap` says the call's
// pointers trade places. A peeled product (dispatch.hpp's Peel) has a part per block of C, each
// reading the call's arrays from its own first elements.
struct Part {
  LaunchPlan plan;
  std::string family;
  bool swap = false;
  long long a_at = 0, b_at = 0, c_at = 0;
  // A GEMV's x gathered first (dispatch.hpp's gathers_x): its gather_k elements, gather_inc apart,
  // copied to `gathered` in the workspace.
  long long gather_k = 0, gather_inc = 0;
  float* gathered = nullptr;
  size_t float_bytes = 0;  // split-K + packed + staged + gathered
  size_t counter_bytes = 0;
};

struct Plan {
  std::vector<Part> parts;  // the main block first, then the edge parts (Library::launch_parts)
  bool beside = false;      // the edge parts run beside the main block (dispatch.hpp's edges_beside)
  std::string what;         // for messages
  std::string range;        // the NVTX range of its calls: operation, shape, mode, kernel configurations
  // The parts' together: each part has workspace of its own, since they run at once.
  size_t float_bytes = 0, counter_bytes = 0;
  uint64_t bound = 0;      // the workspace generation the plan's pointers point into (0: none yet)
  std::unique_ptr<Plan> fallback;  // the plan that needs no workspace, made when one cannot be had
  size_t bytes() const { return float_bytes + counter_bytes; }
  // Points the parts into a workspace, one after another: partial sums, packed operands, staged
  // operands, and counters.
  void bind(float* floats, unsigned* counters) {
    size_t at = 0;
    auto carve = [&](size_t n) {
      float* p = reinterpret_cast<float*>(reinterpret_cast<char*>(floats) + at);
      at += round_up(n * sizeof(float));
      return p;
    };
    for (auto& part : parts) {
      auto& plan = part.plan;
      if (plan.workspace_floats) plan.args.workspace = carve(plan.workspace_floats);
      if (plan.counter_count) plan.args.counters = counters;
      counters += plan.counter_count;
      if (size_t n = plan.packed.floats()) bind_packed(plan, carve(n));
      if (size_t n = plan.tma.staged_floats()) bind_staged(plan, carve(n));
      if (part.gather_k) part.gathered = carve(size_t(part.gather_k));
    }
  }
};

// A switch read once from the environment: "0" or "1", else `by_default`.
bool env_switch(const char* name, bool by_default) {
  const std::string v = std::getenv(name) ? std::getenv(name) : "";
  return v == "0" ? false : v == "1" ? true : by_default;
}
// Whether the library peels products just past a tile multiple: yes unless GEMMLAB_PEEL=0 (for an
// A/B measurement; perf-log 104).
bool peel_enabled() {
  static const bool enabled = env_switch("GEMMLAB_PEEL", true);
  return enabled;
}
// Whether a peeled call's edge parts may run beside its main block (where edges_beside says so) or
// always after it on the call's stream: GEMMLAB_PEEL_BESIDE=0 (A/B measurement; perf-log 105c).
bool peel_beside_enabled() {
  static const bool enabled = env_switch("GEMMLAB_PEEL_BESIDE", true);
  return enabled;
}
// Whether it gathers a strided x before a GEMV (dispatch.hpp's gathers_x); GEMMLAB_GATHER=0 turns it
// off (A/B measurement; perf-log 105).
bool gather_enabled() {
  static const bool enabled = env_switch("GEMMLAB_GATHER", true);
  return enabled;
}

// Device memory that a stream's calls share. Its lock is held while a call's launches are
// enqueued.
struct StreamWorkspace {
  std::mutex mu;
  float* floats = nullptr;
  unsigned* counters = nullptr;  // zeroed; every kernel leaves them zero
  size_t float_bytes = 0, counter_bytes = 0;
  uint64_t generation = 0;  // changes with every new buffer
  cudaEvent_t last_use = nullptr;  // after the latest call that used the buffers
  // Where a peeled call's edge parts run beside its main block, made on first use on `side_device`
  // (kept for the process, as the stream's entry is), with the events that fork it from the
  // stream and join it back.
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
  int side_device = -1;
  size_t bytes() const { return float_bytes + counter_bytes; }
  // Frees the buffers once the work using them is done.
  void drop() {
    if (last_use) GEMMLAB_CUDA(cudaEventSynchronize(last_use));
    for (void* p : {static_cast<void*>(floats), static_cast<void*>(counters)})
      if (p) GEMMLAB_CUDA(cudaFree(p));
    floats = nullptr, counters = nullptr, float_bytes = counter_bytes = 0;
  }
};

// A call inside a stream capture gets a workspace of its own, owned by the graph (a CUDA user
// object): replays of the graph read it long after the call, while the stream's workspace changes.
// When the graph and its executable instances are gone, CUDA calls `graph_destroyed` on a thread of
// its own, where no CUDA call is allowed: the buffer waits in this list for the library's next
// chance to free it. (Never destroyed: a graph may outlive the library's statics.)
struct GraphBuffer {
  void* memory;
  uint64_t key;  // its entry in the ledger
};
struct Orphans {
  std::mutex mu;
  std::vector<GraphBuffer> list;
};
Orphans& orphans() {
  static auto* o = new Orphans;
  return *o;
}
void CUDART_CB graph_destroyed(void* p) {
  std::unique_ptr<GraphBuffer> b(static_cast<GraphBuffer*>(p));
  std::lock_guard lock(orphans().mu);
  orphans().list.push_back(*b);
}
// Ledger keys of graph buffers; a stream's key is its handle, a user-space address, without this bit.
constexpr uint64_t kGraphKey = 1ull << 63;

// What runs a call: the choice, and the problem its family plans (the call's, or a vector
// route's GEMV).
struct Decision {
  Choice choice;
  Route route = Route::gemm;
  Problem problem;
};

class Library {
 public:
  static Library& get() {
    static Library lib;
    return lib;
  }

  // The hot path: a shape seen before is one hash lookup, the stream's lock, then the launches.
  // Only a new shape builds, checks and plans the problem (`make` is called under the library's
  // lock, once per key).
  template <class MakeProblem>
  void run(const PlanKey& key, MakeProblem make, const float* a, const float* b, float* c, float alpha, float beta,
           cudaStream_t stream) {
    Plan* plan = nullptr;
    std::shared_ptr<StreamWorkspace> ws;
    {
      std::lock_guard lock(mu_);
      auto it = plans_.find(key);
      if (it == plans_.end()) it = plans_.emplace(key, make_plan(key.device, make(), key.math, a, b, c, false)).first;
      plan = it->second.get();
      auto& w = streams_[key.stream];
      if (!w) w = std::make_shared<StreamWorkspace>();
      ws = w;
    }
    // One call's launches (pre-pass, kernel, reduce) follow each other on the stream: a call from
    // another thread on the same stream must not put its own between them (it would overwrite the
    // partial sums or packed operands this call's next launch reads).
    std::lock_guard enqueue(ws->mu);
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    cudaGraph_t graph = nullptr;
    if (plan->bytes()) GEMMLAB_CUDA(cudaStreamGetCaptureInfo(stream, &capturing, nullptr, &graph));
    const bool captured = capturing == cudaStreamCaptureStatusActive;
    auto provided = [&](Plan& p) {
      return !p.bytes() || (captured ? provide_graph(graph, *ws, p) : provide(key.stream, *ws, p));
    };
    if (!provided(*plan)) {
      {
        std::lock_guard lock(mu_);
        if (!plan->fallback) plan->fallback = make_plan(key.device, make(), key.math, a, b, c, true);
      }
      plan = plan->fallback.get();
      // make_plan's promise: a fallback needs no workspace.
      if (!provided(*plan)) throw RuntimeError(plan->what + ": no workspace to be had, and its fallback needs one");
    }
    CallRange range(plan->range);
    launch_parts(*plan, *ws, key.device, a, b, c, alpha, beta, stream);
    if (plan->bytes() && !captured) GEMMLAB_CUDA(cudaEventRecord(ws->last_use, stream));
  }

  // A peeled plan's edge parts write other blocks of C than its main block and have workspace of
  // their own: they run on the stream's side stream, forked from the stream before the main block
  // (after the work before the call) and joined back after it (before the work after the call), so
  // that they fill the SMs the main block's last wave leaves idle; where the plan says not beside
  // (edges_beside), after the main block on the call's stream. A capture records the fork and the
  // join as the graph's edges. Called with the stream's lock held.
  void launch_parts(const Plan& plan, StreamWorkspace& ws, int device, const float* a, const float* b, float* c,
                    float alpha, float beta, cudaStream_t stream) {
    auto go = [&](const Part& part, cudaStream_t s) {
      const float *pa = a + part.a_at, *pb = b + part.b_at;
      const float* x = part.swap ? pa : pb;  // a GEMV's vector; a GEMM's op(B)
      if (part.gather_k) {
        GEMMLAB_CUDA(cudaMemcpy2DAsync(part.gathered, sizeof(float), x, size_t(part.gather_inc) * sizeof(float),
                                       sizeof(float), size_t(part.gather_k), cudaMemcpyDeviceToDevice, s));
        x = part.gathered;
      }
      launch(part.plan, part.swap ? pb : pa, x, c + part.c_at, alpha, beta, s);
    };
    const bool beside = plan.beside && peel_beside_enabled();
    if (beside && !ws.side) {
      RelaxedCapture relaxed;  // made once, possibly inside a capture
      GEMMLAB_CUDA(cudaStreamCreateWithFlags(&ws.side, cudaStreamNonBlocking));
      GEMMLAB_CUDA(cudaEventCreateWithFlags(&ws.fork, cudaEventDisableTiming));
      GEMMLAB_CUDA(cudaEventCreateWithFlags(&ws.join, cudaEventDisableTiming));
      ws.side_device = device;
    }
    // The legacy default stream's entry serves every device: its side stream only the first.
    if (!beside || ws.side_device != device) {
      for (const auto& part : plan.parts) go(part, stream);
      return;
    }
    GEMMLAB_CUDA(cudaEventRecord(ws.fork, stream));
    go(plan.parts[0], stream);
    GEMMLAB_CUDA(cudaStreamWaitEvent(ws.side, ws.fork));
    for (size_t i = 1; i < plan.parts.size(); ++i) go(plan.parts[i], ws.side);
    GEMMLAB_CUDA(cudaEventRecord(ws.join, ws.side));
    GEMMLAB_CUDA(cudaStreamWaitEvent(stream, ws.join));
  }

  // A peeled product's choice is its main block's, the peel said first.
  Choice choose(int device, const Problem& p, MathMode math) {
    std::lock_guard lock(mu_);
    const Peel x = peel_enabled() ? peel(model(device), p, math) : Peel{};
    if (!x.any()) {
      auto d = decide(device, p, math, false);
      if (gather_enabled() && gathers_x(d.problem))
        d.choice.why += "; x gathered first from increments of " + std::to_string(d.problem.ldb);
      return d.choice;
    }
    const Problem main = peel_parts(p, x)[0].problem;
    Choice ch = decide(device, main, math, false).choice;
    char times[64];
    std::snprintf(times, sizeof times, "peeled (model %.1f us, whole %.1f): ", x.parts_us, x.whole_us);
    const bool beside = peel_beside_enabled() && edges_beside(model(device), main, ch.family);
    ch.why = times + ("the main block " + describe(main) + " here, the " + std::to_string(x.rows) + " rows and " +
                      std::to_string(x.cols) + " columns past it as calls of their own " +
                      (beside ? "beside it (a side stream); " : "after it; ")) +
             ch.why;
    return ch;
  }

  size_t held() {
    free_orphans();
    std::lock_guard lock(mu_);
    return ledger_.held();
  }
  size_t limit() {
    std::lock_guard lock(mu_);
    return limit_or_default();
  }
  void set_limit(size_t bytes) {
    std::lock_guard lock(mu_);
    ledger_.set_limit(bytes);
    limit_set_ = true;
  }

  // Waits for each stream's last call, then frees its buffers (graphs keep theirs until they are destroyed).
  void release() {
    std::vector<std::pair<uint64_t, std::shared_ptr<StreamWorkspace>>> all;
    {
      std::lock_guard lock(mu_);
      all.assign(streams_.begin(), streams_.end());
    }
    std::optional<RelaxedCapture> relaxed;  // none without streams: nothing to do, even without a GPU
    if (!all.empty()) relaxed.emplace();
    for (auto& [key, ws] : all) {
      std::lock_guard enqueue(ws->mu);
      ws->drop();
      ws->generation = ++generations_;
      std::lock_guard lock(mu_);
      ledger_.set(key, 0);
    }
    free_orphans();
  }

 private:
  size_t limit_or_default() {
    if (!limit_set_) {
      size_t free = 0, total = 0;
      GEMMLAB_CUDA(cudaMemGetInfo(&free, &total));
      ledger_.set_limit(total / kDefaultWorkspaceDivisor);
      limit_set_ = true;
    }
    return ledger_.limit();
  }

  // Reserves `bytes` for `key` in the ledger (in place of what it holds), first freeing the
  // workspaces of other streams, least recently used first, when the limit needs it. A stream's
  // workspace can be taken only when no call of it is being enqueued (try_lock). False when the
  // limit cannot give it.
  bool reserve(uint64_t key, size_t bytes, const StreamWorkspace* self) {
    std::lock_guard lock(mu_);
    limit_or_default();
    const size_t before = ledger_.held_by(key);
    auto evictable = [&](uint64_t k) {
      auto it = streams_.find(k);
      return it != streams_.end() && it->second.get() != self;
    };
    auto evict = ledger_.request(key, bytes, evictable);
    if (!evict) return false;
    // Reserved now, so that another stream growing at the same time sees it.
    ledger_.set(key, bytes);
    for (uint64_t k : *evict) {
      auto other = streams_.at(k);
      std::unique_lock l(other->mu, std::try_to_lock);
      if (!l.owns_lock()) {
        ledger_.set(key, before);
        return false;
      }
      other->drop();
      other->generation = ++generations_;
      ledger_.set(k, other->bytes());
    }
    return true;
  }

  // Device memory for a workspace: `floats` bytes, then `counters` bytes zeroed. False when the
  // device has not got it (not sticky: the call takes a plan without workspace).
  static bool allocate(size_t floats, size_t counters, float*& f, unsigned*& c) {
    void* fp = nullptr;
    void* cp = nullptr;
    if (cudaMalloc(&fp, floats) != cudaSuccess || (counters && cudaMalloc(&cp, counters) != cudaSuccess)) {
      cudaGetLastError();
      cudaFree(fp);
      return false;
    }
    if (counters) zero_aside(cp, counters);
    f = static_cast<float*>(fp), c = static_cast<unsigned*>(cp);
    return true;
  }

  // Makes the stream's workspace big enough for the plan and points the plan into it (the stream's
  // lock is held). False when the limit or the device's memory cannot give it.
  bool provide(uint64_t key, StreamWorkspace& ws, Plan& plan) {
    const size_t fb = std::max(ws.float_bytes, plan.float_bytes), cb = std::max(ws.counter_bytes, plan.counter_bytes);
    if (fb != ws.float_bytes || cb != ws.counter_bytes) {
      RelaxedCapture relaxed;
      free_orphans();
      if (!reserve(key, fb + cb, &ws)) return false;
      ws.drop();
      ws.generation = ++generations_;
      const bool ok = allocate(fb, cb, ws.floats, ws.counters);
      if (ok) ws.float_bytes = fb, ws.counter_bytes = cb;
      if (!ws.last_use) GEMMLAB_CUDA(cudaEventCreateWithFlags(&ws.last_use, cudaEventDisableTiming));
      std::lock_guard lock(mu_);
      ledger_.set(key, ws.bytes());
      if (!ok) return false;
    } else {
      std::lock_guard lock(mu_);
      ledger_.touch(key);
    }
    if (plan.bound != ws.generation) {
      plan.bind(ws.floats, ws.counters);
      plan.bound = ws.generation;
    }
    return true;
  }

  // A workspace for one captured call, which the graph being captured owns (see GraphBuffer). The
  // capturing stream's lock is held: its own workspace is not one to take.
  bool provide_graph(cudaGraph_t graph, const StreamWorkspace& ws, Plan& plan) {
    RelaxedCapture relaxed;
    free_orphans();
    const uint64_t key = kGraphKey | ++graph_buffers_;
    if (!reserve(key, plan.bytes(), &ws)) return false;
    float* f = nullptr;
    unsigned* c = nullptr;
    if (!allocate(plan.float_bytes + plan.counter_bytes, 0, f, c)) {
      std::lock_guard lock(mu_);
      ledger_.set(key, 0);
      return false;
    }
    c = reinterpret_cast<unsigned*>(reinterpret_cast<char*>(f) + plan.float_bytes);
    if (plan.counter_bytes) zero_aside(c, plan.counter_bytes);
    cudaUserObject_t owner = nullptr;
    auto* buffer = new GraphBuffer{f, key};
    if (cudaError_t e = cudaUserObjectCreate(&owner, buffer, graph_destroyed, 1, cudaUserObjectNoDestructorSync);
        e != cudaSuccess) {
      delete buffer;
      cudaFree(f);
      std::lock_guard lock(mu_);
      ledger_.set(key, 0);
      GEMMLAB_CUDA(e);
    }
    if (cudaError_t e = cudaGraphRetainUserObject(graph, owner, 1, cudaGraphUserObjectMove); e != cudaSuccess) {
      cudaUserObjectRelease(owner);  // its destructor hands the buffer to free_orphans
      GEMMLAB_CUDA(e);
    }
    plan.bind(f, c);
    plan.bound = 0;  // the stream's next call binds its own workspace again
    return true;
  }

  // Frees the buffers of graphs destroyed since (under RelaxedCapture: another thread may be capturing).
  void free_orphans() {
    std::vector<GraphBuffer> gone;
    {
      std::lock_guard lock(orphans().mu);
      gone.swap(orphans().list);
    }
    if (gone.empty()) return;
    RelaxedCapture relaxed;
    std::lock_guard lock(mu_);
    for (auto& g : gone) {
      GEMMLAB_CUDA(cudaFree(g.memory));
      ledger_.set(g.key, 0);
    }
  }

  // The device's own model, or the one GEMMLAB_MODEL names (h100, h200, a100): an A/B of the model's
  // card-dependent choices on one card (perf-log 106).
  const GpuModel& model(int device) {
    auto it = models_.find(device);
    if (it == models_.end()) {
      const std::string name = std::getenv("GEMMLAB_MODEL") ? std::getenv("GEMMLAB_MODEL") : "";
      const auto named = GpuModel::named(name);
      if (!name.empty() && !named)
        throw UsageError("GEMMLAB_MODEL=" + name +
                         ": no such GPU model (h100, h200 or a100, or unset for the device's)");
      it = models_.emplace(device, named ? *named : GpuModel::of(device_info(device))).first;
    }
    return it->second;
  }

  // A function of the device, the problem, the mode and the tuning database alone (and, with
  // `no_workspace`, a choice that needs no workspace: the table is skipped, the model keeps to
  // configurations without split-K, packing or staging).
  Decision decide(int device, const Problem& p, MathMode math, bool no_workspace) {
    if (p.op == Op::gemv) return {table_choice(device, p, "a GEMV call", math), Route::gemm, p};
    const Problem c = canonical(p);
    auto d = dispatch(model(device), c, math, no_workspace ? 0 : kNoWorkspaceBound);
    if (d.route != Route::gemm) {
      Problem g = vector_problem(c, d.route);
      auto ch = table_choice(device, g, d.why, math);
      return {ch, d.route, g};
    }
    if (math == MathMode::strict_fp32 && !no_workspace)
      if (auto ch = table_choice(device, p, "measured for this shape", math, /*exact=*/true); !ch.family.empty())
        return {ch, Route::gemm, p};
    Choice ch{d.family, d.params, "model", d.why, d.workspace_bytes, d.predicted_us};
    return {ch, Route::gemm, p};
  }

  // The measured choice for a problem: the tuning database, then the built-in table, then the
  // defaults. With `exact`, only what was measured for this problem: a database entry of its shape
  // class (the user tuned it), a built-in entry of its very shape and layout (the table holds
  // row-major NN squares: its 1024³ entry is no guide for 768³ or 1024 x 4096 x 1024), else nothing.
  // In tensor_fp32, a CUDA-core configuration in the mode's arithmetic (with_math).
  Choice table_choice(int device, const Problem& p, const std::string& why, MathMode math, bool exact = false,
                      bool defaults_only = false) {
    auto& dev = device_info(device);
    auto arch = arch_name(dev.cc_major, dev.cc_minor);
    if (!db_) {
      db_ = TuningDb::load(default_tuning_db());
      // The library has no other channel to say it: once, on stderr.
      if (!db_->problem().empty()) std::fprintf(stderr, "gemmlab: %s\n", db_->problem().c_str());
    }
    auto usable = [&](const TuningEntry& e) {
      auto* f = find_family(e.family);
      return f && f->op() == p.op && accepts(*f, e.params) && launcher(*f, e.params).unsupported(p).empty();
    };
    // In tensor_fp32, an FP32 entry of a family that can sum in FP64, in that arithmetic
    // (with_math): gemv-warp, FP32 sums alone, is another mode's choice.
    auto convertible = [&](const TuningEntry& e) {
      if (math != MathMode::tensor_fp32 || !usable(e)) return false;
      auto& f = *find_family(e.family);
      return fits_math(e.family, e.params, math, p.k) &&
             f.fp64_accumulators(parse_params(f, with_math(e.family, e.params, math, p.k)));
    };
    // Entries measured in the mode's arithmetic: FP64 sums for tensor_fp32 (a GEMV with FP64 sums
    // wants more loads in flight than its FP32 best: 1024 threads, one load each, ran 0.78x of it
    // on 8192 x 32768, perf-log 56; with fp64tile's sums too: the FP32 entries so converted ran up to
    // 10 % slower than these, perf-log 110), FP32 sums for the others.
    auto measured_in_mode = [&](const TuningEntry& e) {
      return usable(e) && sums_in_fp64(e) == (math == MathMode::tensor_fp32);
    };
    auto lookup = [&](const TuningDb& db) {
      auto* e = db.best(dev.name, arch, "", p, exact, measured_in_mode);
      return e ? e : db.best(dev.name, arch, "", p, exact, convertible);
    };
    auto made = [&](const std::string& family, const std::string& given, const std::string& source) {
      auto& f = *find_family(family);
      const std::string params = with_math(family, given, math, p.k, p.m);
      Choice ch{family, params, source, why};
      ch.workspace_bytes = launcher(f, params).workspace_bytes(p);
      return ch;
    };
    if (auto* e = defaults_only ? nullptr : lookup(*db_)) return made(e->family, e->params, "tuning database");
    const Problem c = canonical(p);
    const std::string shape = std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k);
    // The table's squares were measured row-major NN: another layout reads its operands otherwise
    // (e.g. hopper-simt's transposed A at 0.95x cuBLAS where NN is 0.90x), so the model decides it.
    const bool measured_layout = c.trans_a == Trans::no && c.trans_b == Trans::no;
    if (auto* e = defaults_only ? nullptr : lookup(builtin_table()); e && (!exact || (e->shape == shape && measured_layout)))
      return made(e->family, e->params, "built-in table");
    if (exact) return {};
    std::string family = p.op == Op::gemm ? "warptiled" : op_a_strides(p).col == 1 ? "gemv-block" : "gemv-columns";
    return made(family, default_params(family, math, p.k), "defaults");
  }

  // With `no_workspace`, a plan that needs none (the fallback when a workspace cannot be had).
  std::unique_ptr<Plan> make_plan(int device, const Problem& p, MathMode math, const float* a, const float* b,
                                  const float* c, bool no_workspace) {
    RelaxedCapture relaxed;
    auto owned = std::make_unique<Plan>();
    owned->what = "sgemm " + describe(p);
    const Peel peeled = !no_workspace && peel_enabled() ? peel(model(device), p, math) : Peel{};
    const auto blocks = peeled.any() ? peel_parts(p, peeled) : std::vector<PeelPart>{{p}};
    std::string kernels;
    for (const auto& x : blocks) {
      Part part = make_part(device, x.problem, math, a + x.a_at, b + x.b_at, c + x.c_at, no_workspace,
                            peeled.any(), kernels);
      part.a_at = x.a_at, part.b_at = x.b_at, part.c_at = x.c_at;
      owned->float_bytes += part.float_bytes;
      owned->counter_bytes += part.counter_bytes;
      owned->parts.push_back(std::move(part));
    }
    owned->beside = peeled.any() && edges_beside(model(device), blocks[0].problem, owned->parts[0].family);
    char why[96] = "";
    if (peeled.any())
      std::snprintf(why, sizeof why, "peeled (model %.1f us, whole %.1f): ", peeled.parts_us, peeled.whole_us);
    owned->range = (p.op == Op::gemm ? "sgemm " : "s") + describe(p) + " " + to_string(math) + ": " + why + kernels +
                   (no_workspace ? " (no workspace)" : "");
    return owned;
  }

  // One part of a plan: the problem's decision and its launch plan; its kernel described on
  // `kernels` (with its own shape where `named`, a peeled part).
  Part make_part(int device, const Problem& p, MathMode math, const float* a, const float* b, const float* c,
                 bool no_workspace, bool named, std::string& kernels) {
    auto d = decide(device, p, math, no_workspace);
    Part part;
    // The vector routes' operands in the GEMV's order: the matrix, then the vector. (A GEMM plan trades a column-major call's operands itself.)
    part.swap = d.route != Route::gemm && swapped(p) != (d.route == Route::gemv_m);
    const float* x = part.swap ? a : b;
    std::string gathered;
    if (gather_enabled() && !no_workspace && gathers_x(d.problem)) {
      static const float aligned[4] = {};  // the copy's address: a workspace carve, 256-byte aligned
      part.gather_k = d.problem.k, part.gather_inc = d.problem.ldb;
      gathered = " (x gathered from increments of " + std::to_string(d.problem.ldb) + ")";
      d.problem.ldb = 1, x = aligned;
    }
    auto plan_of = [&](const Choice& ch) {
      return launcher(*find_family(ch.family), ch.params)
          .plan(d.problem, part.swap ? b : a, x, c, /*shared_buffers=*/false, /*whole_alignment=*/true);
    };
    Choice ch = d.choice;
    part.plan = plan_of(ch);
    // The model assumes aligned operands: one at an odd address is staged or packed in a workspace.
    // Without one: a GEMV in one split (its reduction in the block), a GEMM on its family's
    // defaults (warptiled: no split, operands read as given).
    const auto& lp = part.plan;
    if (no_workspace && (lp.workspace_floats || lp.counter_count || lp.packed.floats() || lp.tma.staged_floats())) {
      if (d.problem.op == Op::gemv) ch.params = unsplit_gemv(ch.family, ch.params);
      else ch = table_choice(device, p, "no workspace to be had", math, false, /*defaults_only=*/true);
      part.plan = plan_of(ch);
    }
    const auto& plan = part.plan;
    part.family = ch.family;
    kernels += (kernels.empty() ? "" : "; ") + (named ? describe(p) + ": " : "") +
               (d.route == Route::gemm ? "" : "as " + describe(d.problem) + ", ") + ch.family + " " + ch.params +
               gathered;
    auto bytes = [](size_t floats) { return round_up(floats * sizeof(float)); };
    part.float_bytes = bytes(plan.workspace_floats) + bytes(plan.packed.floats()) + bytes(plan.tma.staged_floats()) +
                       bytes(size_t(part.gather_k));
    part.counter_bytes = plan.counter_count * sizeof(unsigned);
    return part;
  }

  FamilyLauncher& launcher(const KernelFamily& f, const std::string& params) {
    int device = 0;
    GEMMLAB_CUDA(cudaGetDevice(&device));
    auto key = std::to_string(device) + " " + f.name() + " " + params;
    auto it = launchers_.find(key);
    if (it == launchers_.end())
      it = launchers_.emplace(key, std::make_unique<FamilyLauncher>(f, parse_params(f, params))).first;
    return *it->second;
  }

  const DeviceInfo& device_info(int device) {
    auto it = devices_.find(device);
    if (it == devices_.end()) it = devices_.emplace(device, query_device(device)).first;
    return it->second;
  }

  std::mutex mu_;
  std::unordered_map<PlanKey, std::unique_ptr<Plan>, PlanKeyHash> plans_;
  std::unordered_map<uint64_t, std::shared_ptr<StreamWorkspace>> streams_;
  WorkspaceLedger ledger_;
  bool limit_set_ = false;
  uint64_t generations_ = 0;
  uint64_t graph_buffers_ = 0;
  std::map<std::string, std::unique_ptr<FamilyLauncher>> launchers_;
  std::map<int, DeviceInfo> devices_;
  std::map<int, GpuModel> models_;
  std::optional<TuningDb> db_;
};

int current_device() {
  int device = 0;
  GEMMLAB_CUDA(cudaGetDevice(&device));
  return device;
}

}  // namespace

std::string to_string(MathMode m) {
  switch (m) {
    case MathMode::strict_fp32: return "strict-fp32";
    case MathMode::tensor_fp32: return "tensor-fp32";
    case MathMode::tf32: return "tf32";
  }
  return "?";
}

MathMode parse_math_mode(const std::string& s) {
  for (auto m : {MathMode::strict_fp32, MathMode::tensor_fp32, MathMode::tf32}) {
    std::string name = to_string(m), underscored = name;
    std::replace(underscored.begin(), underscored.end(), '-', '_');
    if (s == name || s == underscored) return m;
  }
  throw UsageError("unknown mode '" + s + "' (expected strict_fp32, tensor_fp32 or tf32)");
}

namespace {

// The problems of the calls, checked (host only: no CUDA call).
Problem sgemm_problem(Layout layout, Trans trans_a, Trans trans_b, int64_t m, int64_t n, int64_t k, int64_t lda,
                      int64_t ldb, int64_t ldc) {
  // Zero leading dimensions mean "tight" to the lab; a BLAS call states them, so 0 is an error.
  if (lda <= 0 || ldb <= 0 || ldc <= 0) throw UsageError("sgemm: leading dimensions must be positive");
  Problem p;
  p.m = m, p.n = n, p.k = k;
  p.layout = layout, p.trans_a = trans_a, p.trans_b = trans_b;
  p.lda = lda, p.ldb = ldb, p.ldc = ldc;
  return normalized(p);
}

// A column-major A is the row-major Aᵀ, transposed the other way: one form, whose x and y are the
// one-column B and C with the increments as their leading dimensions.
void check_increments(int64_t incx, int64_t incy) {
  if (incx < 1 || incy < 1)
    throw UsageError("sgemv: increments must be at least 1 (incx = " + std::to_string(incx) +
                     ", incy = " + std::to_string(incy) + ")");
}

Problem sgemv_problem(Layout layout, Trans trans, int64_t m, int64_t n, int64_t lda, int64_t incx, int64_t incy) {
  check_increments(incx, incy);
  if (lda <= 0) throw UsageError("sgemv: the leading dimension must be positive");
  const bool col = layout == Layout::col_major;
  const Trans t = col ? (trans == Trans::no ? Trans::yes : Trans::no) : trans;
  Problem p = Problem::gemv(col ? n : m, col ? m : n, Layout::row_major, t);
  p.lda = lda;
  p = normalized(p);
  p.ldb = incx, p.ldc = incy;
  return p;
}

}  // namespace

void check_sgemm(Layout layout, Trans trans_a, Trans trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                 int64_t lda, const float* b, int64_t ldb, const float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (!a || !b || !c) throw UsageError("sgemm: A, B and C must not be null");
  sgemm_problem(layout, trans_a, trans_b, m, n, k, lda, ldb, ldc);
}

void check_sgemv(Layout layout, Trans trans, int64_t m, int64_t n, const float* a, int64_t lda, const float* x,
                 int64_t incx, const float* y, int64_t incy) {
  check_increments(incx, incy);
  if (m == 0 || n == 0) return;
  if (!a || !x || !y) throw UsageError("sgemv: A, x and y must not be null");
  sgemv_problem(layout, trans, m, n, lda, incx, incy);
}

void sgemm(Layout layout, Trans trans_a, Trans trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, cudaStream_t stream,
           MathMode math) {
  if (m == 0 || n == 0) return;
  if (!a || !b || !c) throw UsageError("sgemm: A, B and C must not be null");
  PlanKey key{current_device(), Op::gemm, layout, trans_a, trans_b, m, n, k, lda, ldb, ldc,
              alignment_bits(a, b, c), stream_key(stream), math, beta != 0.0f};
  Library::get().run(
      key,
      [&] {
        auto p = sgemm_problem(layout, trans_a, trans_b, m, n, k, lda, ldb, ldc);
        p.beta = beta;
        return p;
      },
      a, b, c, alpha, beta, stream);
}

void sgemv(Layout layout, Trans trans, int64_t m, int64_t n, float alpha, const float* a, int64_t lda, const float* x,
           int64_t incx, float beta, float* y, int64_t incy, cudaStream_t stream) {
  check_increments(incx, incy);
  if (m == 0 || n == 0) return;
  if (!a || !x || !y) throw UsageError("sgemv: A, x and y must not be null");
  PlanKey key{current_device(), Op::gemv, layout, trans, Trans::no, m, n, 1, lda, incx, incy, alignment_bits(a, x, y),
              stream_key(stream), MathMode::strict_fp32};
  Library::get().run(
      key, [&] { return sgemv_problem(layout, trans, m, n, lda, incx, incy); }, a, x, y, alpha, beta, stream);
}

Choice choose(const Problem& p, MathMode math) { return Library::get().choose(current_device(), normalized(p), math); }

size_t workspace_bytes_held() { return Library::get().held(); }
size_t workspace_limit() { return Library::get().limit(); }
void set_workspace_limit(size_t bytes) { Library::get().set_limit(bytes); }
void release_workspaces() { Library::get().release(); }

}  // namespace gemmlab
