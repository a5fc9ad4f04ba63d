// Hardware counters in-process: CUPTI's range profiler (cupti_range_profiler.h, CUDA 12.6+) with
// the profiler host API for configuration and evaluation. Auto ranges (every kernel the workload
// launches is one range) with user replay: gemmlab runs the workload once per pass, and the caller
// may empty L2 before each, so every pass starts from the same cache state whatever ran before.
// A range ends with L2 written back: DRAM write counters include the kernel's own deferred
// write-back, which Nsight Compute's do not (docs/perf-log.md, entry 13). Launch records
// (registers, shared memory) come from the activity API.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "counters/counters.hpp"
#include "gemmlab/error.hpp"

namespace gemmlab {

namespace {

std::string why(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetErrorMessage(r, &s) != CUPTI_SUCCESS || !s) cuptiGetResultString(r, &s);
  std::string text = s ? s : "unknown CUPTI error";
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    text += " (profiling needs admin rights: run as root or load the driver with NVreg_RestrictProfilingToAdminUsers=0)";
  return text;
}

void check(CUptiResult r, const char* what) {
  if (r != CUPTI_SUCCESS) throw CountersUnavailable(std::string("counters unavailable: ") + what + ": " + why(r));
}

#define CUPTI_CHECK(call) check((call), #call)

template <class P>
P params(size_t size) {
  P p;
  std::memset(&p, 0, sizeof p);
  p.structSize = size;
  return p;
}
#define PARAMS(T) params<T>(T##_STRUCT_SIZE)

CUcontext current_context() {
  // The runtime's primary context, created if the workload has not touched the GPU yet. The
  // driver's cuCtxGetCurrent comes through the runtime, so that gemmlab does not link libcuda
  // (machines without a driver must still load it).
  if (cudaFree(nullptr) != cudaSuccess) throw CountersUnavailable("counters unavailable: no usable CUDA device");
  using GetCurrent = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, CUDART_VERSION, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !fn)
    throw CountersUnavailable("counters unavailable: the driver has no cuCtxGetCurrent");
  CUcontext ctx = nullptr;
  if (reinterpret_cast<GetCurrent>(fn)(&ctx) != CUDA_SUCCESS || !ctx)
    throw CountersUnavailable("counters unavailable: no CUDA context");
  return ctx;
}

// One profiler initialisation per process; CUPTI keeps it until exit.
void initialize_profiler() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    auto p = PARAMS(CUpti_Profiler_Initialize_Params);
    CUptiResult r = cuptiProfilerInitialize(&p);
    if (r != CUPTI_SUCCESS) failure = "counters unavailable: cuptiProfilerInitialize: " + why(r);
  });
  if (!failure.empty()) throw CountersUnavailable(failure);
}

struct Chip {
  std::string name;
  std::vector<uint8_t> availability;
};

Chip chip_of(CUcontext ctx) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) throw CountersUnavailable("counters unavailable: no current device");
  auto cn = PARAMS(CUpti_Device_GetChipName_Params);
  cn.deviceIndex = size_t(dev);
  CUPTI_CHECK(cuptiDeviceGetChipName(&cn));
  Chip c{cn.pChipName, {}};
  auto ca = PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  ca.ctx = ctx;
  CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&ca));
  c.availability.resize(ca.counterAvailabilityImageSize);
  ca.pCounterAvailabilityImage = c.availability.data();
  CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&ca));
  return c;
}

class HostObject {
 public:
  explicit HostObject(Chip& chip) {
    auto p = PARAMS(CUpti_Profiler_Host_Initialize_Params);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.name.c_str();
    p.pCounterAvailabilityImage = chip.availability.data();
    CUPTI_CHECK(cuptiProfilerHostInitialize(&p));
    obj_ = p.pHostObject;
  }
  ~HostObject() {
    auto p = PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    p.pHostObject = obj_;
    cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  CUpti_Profiler_Host_Object* get() const { return obj_; }

  std::set<std::string> base_metrics() const {
    std::set<std::string> out;
    for (auto type : {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
      auto p = PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params);
      p.pHostObject = obj_;
      p.metricType = type;
      CUPTI_CHECK(cuptiProfilerHostGetBaseMetrics(&p));
      for (size_t i = 0; i < p.numMetrics; ++i) out.insert(p.ppMetricNames[i]);
    }
    return out;
  }

 private:
  CUpti_Profiler_Host_Object* obj_ = nullptr;
};

// "dram__bytes_read.sum.per_second" → "dram__bytes_read"
std::string base_name(const std::string& metric) { return metric.substr(0, metric.find('.')); }

class RangeProfiler {
 public:
  explicit RangeProfiler(CUcontext ctx) {
    auto p = PARAMS(CUpti_RangeProfiler_Enable_Params);
    p.ctx = ctx;
    CUPTI_CHECK(cuptiRangeProfilerEnable(&p));
    obj_ = p.pRangeProfilerObject;
  }
  ~RangeProfiler() {
    auto p = PARAMS(CUpti_RangeProfiler_Disable_Params);
    p.pRangeProfilerObject = obj_;
    cuptiRangeProfilerDisable(&p);
  }
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;
  CUpti_RangeProfiler_Object* get() const { return obj_; }

 private:
  CUpti_RangeProfiler_Object* obj_ = nullptr;
};

constexpr size_t kMaxRanges = 64;  // kernels one workload may launch

// ---- activity records ----

std::mutex g_records_mutex;
std::vector<KernelLaunchInfo>* g_records = nullptr;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  constexpr size_t kSize = 1 << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kSize));
  *size = kSize;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* rec = nullptr;
  std::lock_guard<std::mutex> lock(g_records_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && rec->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
    auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
    if (!g_records) continue;
    KernelLaunchInfo info;
    info.name = k->name ? k->name : "";
    info.registers = k->registersPerThread;
    info.static_shared = k->staticSharedMemory;
    info.dynamic_shared = k->dynamicSharedMemory;
    info.grid[0] = k->gridX, info.grid[1] = k->gridY, info.grid[2] = k->gridZ;
    info.block[0] = k->blockX, info.block[1] = k->blockY, info.block[2] = k->blockZ;
    info.duration_ms = double(k->end - k->start) * 1e-6;
    g_records->push_back(info);
  }
  std::free(buffer);
}

}  // namespace

std::vector<KernelLaunchInfo> trace_launches(const std::function<void()>& workload) {
  current_context();
  static std::once_flag once;
  static CUptiResult registered = CUPTI_SUCCESS;
  std::call_once(once, [] { registered = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed); });
  check(registered, "cuptiActivityRegisterCallbacks");
  std::vector<KernelLaunchInfo> records;
  {
    std::lock_guard<std::mutex> lock(g_records_mutex);
    g_records = &records;
  }
  CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  try {
    workload();
    GEMMLAB_CUDA(cudaDeviceSynchronize());
  } catch (...) {
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityFlushAll(1);
    std::lock_guard<std::mutex> lock(g_records_mutex);
    g_records = nullptr;
    throw;
  }
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CUPTI_CHECK(cuptiActivityFlushAll(1));
  std::lock_guard<std::mutex> lock(g_records_mutex);
  g_records = nullptr;
  return records;
}

std::vector<std::string> available_metrics() {
  CUcontext ctx = current_context();
  initialize_profiler();
  Chip chip = chip_of(ctx);
  HostObject host(chip);
  auto s = host.base_metrics();
  return {s.begin(), s.end()};
}

ProfileOutcome profile_counters(const std::function<void()>& workload, const std::vector<std::string>& wanted,
                                const std::function<void()>& before_pass) {
  auto t0 = std::chrono::steady_clock::now();
  CUcontext ctx = current_context();
  initialize_profiler();
  Chip chip = chip_of(ctx);
  HostObject host(chip);

  ProfileOutcome out;
  // Counters this chip lacks are reported, not requested: one missing name would fail them all.
  auto base = host.base_metrics();
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (auto& m : wanted) {
    if (!seen.insert(m).second) continue;
    if (base.count(base_name(m))) names.push_back(m);
    else out.unavailable.push_back(m);
  }
  if (!seen.count("gpu__time_duration.sum") && base.count("gpu__time_duration"))
    names.push_back("gpu__time_duration.sum");  // main_kernel() picks the longest range
  if (names.empty()) throw CountersUnavailable("counters unavailable: none of the requested counters exists on " + chip.name);
  std::vector<const char*> cnames;
  for (auto& n : names) cnames.push_back(n.c_str());

  auto add = PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  add.pHostObject = host.get();
  add.ppMetricNames = cnames.data();
  add.numMetrics = cnames.size();
  CUPTI_CHECK(cuptiProfilerHostConfigAddMetrics(&add));
  auto csize = PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  csize.pHostObject = host.get();
  CUPTI_CHECK(cuptiProfilerHostGetConfigImageSize(&csize));
  std::vector<uint8_t> config(csize.configImageSize);
  auto cimg = PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  cimg.pHostObject = host.get();
  cimg.configImageSize = config.size();
  cimg.pConfigImage = config.data();
  CUPTI_CHECK(cuptiProfilerHostGetConfigImage(&cimg));
  auto passes = PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  passes.configImageSize = config.size();
  passes.pConfigImage = config.data();
  CUPTI_CHECK(cuptiProfilerHostGetNumOfPasses(&passes));
  out.passes = int(passes.numOfPasses);

  GEMMLAB_CUDA(cudaDeviceSynchronize());  // earlier work must not fall into the first range
  RangeProfiler rp(ctx);
  auto dsize = PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  dsize.pRangeProfilerObject = rp.get();
  dsize.pMetricNames = cnames.data();
  dsize.numMetrics = cnames.size();
  dsize.maxNumOfRanges = kMaxRanges;
  dsize.maxNumRangeTreeNodes = kMaxRanges;
  CUPTI_CHECK(cuptiRangeProfilerGetCounterDataSize(&dsize));
  std::vector<uint8_t> data(dsize.counterDataSize);
  auto dinit = PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  dinit.pRangeProfilerObject = rp.get();
  dinit.counterDataSize = data.size();
  dinit.pCounterData = data.data();
  CUPTI_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&dinit));

  auto cfg = PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  cfg.pRangeProfilerObject = rp.get();
  cfg.configSize = config.size();
  cfg.pConfig = config.data();
  cfg.counterDataImageSize = data.size();
  cfg.pCounterDataImage = data.data();
  cfg.range = CUPTI_AutoRange;
  cfg.replayMode = CUPTI_UserReplay;
  cfg.maxRangesPerPass = kMaxRanges;
  cfg.numNestingLevels = 1;
  cfg.minNestingLevel = 1;
  cfg.passIndex = 0;
  cfg.targetNestingLevel = 1;
  CUPTI_CHECK(cuptiRangeProfilerSetConfig(&cfg));

  // One pass per call of the workload until CUPTI has every counter; a bound in case it never says so.
  bool all_submitted = false;
  for (int pass = 0; !all_submitted; ++pass) {
    if (pass > out.passes + 1)
      throw CountersUnavailable("counters incomplete: CUPTI wanted more than " + std::to_string(out.passes) + " passes");
    if (before_pass) before_pass();
    auto start = PARAMS(CUpti_RangeProfiler_Start_Params);
    start.pRangeProfilerObject = rp.get();
    CUPTI_CHECK(cuptiRangeProfilerStart(&start));
    auto stop = PARAMS(CUpti_RangeProfiler_Stop_Params);
    stop.pRangeProfilerObject = rp.get();
    try {
      workload();
      GEMMLAB_CUDA(cudaDeviceSynchronize());
    } catch (...) {
      cuptiRangeProfilerStop(&stop);
      throw;
    }
    CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
    all_submitted = stop.isAllPassSubmitted;
  }
  auto decode = PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = rp.get();
  CUPTI_CHECK(cuptiRangeProfilerDecodeData(&decode));
  if (decode.numOfRangeDropped)
    throw CountersUnavailable("counters incomplete: the workload launched more than " + std::to_string(kMaxRanges) +
                              " kernels");

  auto info = PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));
  std::vector<double> values(names.size());
  for (size_t r = 0; r < info.numTotalRanges; ++r) {
    KernelCounters k;
    auto rn = PARAMS(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params);
    rn.pCounterDataImage = data.data();
    rn.counterDataImageSize = data.size();
    rn.rangeIndex = r;
    rn.rangeDelimiter = "/";
    if (cuptiRangeProfilerCounterDataGetRangeInfo(&rn) == CUPTI_SUCCESS && rn.rangeName) k.name = rn.rangeName;
    auto ev = PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
    ev.pHostObject = host.get();
    ev.pCounterDataImage = data.data();
    ev.counterDataImageSize = data.size();
    ev.rangeIndex = r;
    ev.ppMetricNames = cnames.data();
    ev.numMetrics = cnames.size();
    ev.pMetricValues = values.data();
    CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues(&ev));
    for (size_t i = 0; i < names.size(); ++i) k.raw[names[i]] = values[i];
    out.kernels.push_back(std::move(k));
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace gemmlab
