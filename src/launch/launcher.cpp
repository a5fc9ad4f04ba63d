#include "launch/launcher.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "compile/compile.hpp"
#include "gemmlab/error.hpp"

#include "launch/tma.hpp"

namespace gemmlab {

// The row-major-C form of a problem: a column-major C is a row-major Cᵀ = op(B)ᵀ·op(A)ᵀ, so the
// operands trade places (and M with N); families only ever see row-major C.
// GEMV is never swapped: its kernels take any strides of op(A), and x and y are vectors.
bool swapped(const Problem& p) { return p.layout == Layout::col_major && p.op == Op::gemm; }

Problem canonical(const Problem& p) {
  if (!swapped(p)) return p;
  Problem q = p;
  q.layout = Layout::row_major;
  std::swap(q.m, q.n);
  std::swap(q.trans_a, q.trans_b);
  std::swap(q.lda, q.ldb);
  return q;
}

Problem transposed_product(const Problem& c) {
  auto flip = [](Trans t) { return t == Trans::no ? Trans::yes : Trans::no; };
  Problem q = c;
  std::swap(q.m, q.n);
  q.trans_a = flip(c.trans_b);  // op(B)ᵀ: B's storage read the other way round
  q.trans_b = flip(c.trans_a);
  std::swap(q.lda, q.ldb);
  return q;
}

Problem family_problem(const KernelFamily& f, const ParamValues& v, const Problem& p) {
  const Problem c = canonical(p);
  return p.op == Op::gemm && f.transposes(v) ? transposed_product(c) : c;
}

namespace {

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Packed rows are whole 128-byte lines: TMA needs 16-byte multiples, and a box row that straddles
// two lines costs a fifth sector (measured: 4097³ ran at 0.64x the speed of 4096³ with 16 bytes).
long long packed_row(long long k, const Packing& spec) {
  const long long line = spec.int8() ? 128 : 32;
  long long lines = (k + line - 1) / line;
  if (spec.odd_lines && lines >= 16 && lines % 2 == 0) ++lines;
  return lines * line;
}

cudaLaunchAttribute cluster_of(unsigned blocks) {
  cudaLaunchAttribute a{};
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = blocks;
  a.val.clusterDim.y = a.val.clusterDim.z = 1;
  return a;
}

// Every kernel of a plan goes out through here: in clusters of `cluster` blocks along x, and, with
// `dependent`, as a programmatic dependent of the grid before it in the stream (its kernels wait
// for that grid themselves: grid_dependency.cuh).
void launch_kernel(cudaKernel_t kernel, dim3 grid, dim3 block, size_t shared_bytes, void** params, cudaStream_t stream,
                   bool dependent, unsigned cluster = 1) {
  cudaLaunchAttribute attrs[2]{};
  unsigned n = 0;
  if (cluster > 1) attrs[n++] = cluster_of(cluster);
  if (dependent) {
    attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  cudaLaunchConfig_t config{grid, block, shared_bytes, stream, attrs, n};
  GEMMLAB_CUDA(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(kernel), params));
}

// `a` and `b` are the canonical problem's operands.
Variant variant_of(const Problem& c, const float* a, const float* b, const float* cptr) {
  Variant v;
  if (c.op == Op::gemv) {
    v.a_k_contig = op_a_strides(c).col == 1;
    v.b_n_contig = true;
    v.a_vec = c.lda % 4 == 0 && aligned16(a);
    v.b_vec = aligned16(b);
    v.c_vec = aligned16(cptr);
    return v;
  }
  v.a_k_contig = c.trans_a == Trans::no;
  v.b_n_contig = c.trans_b == Trans::no;
  v.a_vec = c.lda % 4 == 0 && aligned16(a);
  v.b_vec = c.ldb % 4 == 0 && aligned16(b);
  v.c_vec = c.ldc % 4 == 0 && aligned16(cptr);
  return v;
}

// A kernel of the packed families: (GemmArgs, TensorMaps), in clusters when the plan has them.
void launch_gemm(const LaunchPlan& plan, GemmArgs& args, TensorMaps& maps, cudaStream_t stream) {
  const auto& g = plan.geometry;
  void* params[] = {&args, &maps};
  launch_kernel(plan.kernel, g.grid, g.block, g.shared_bytes, params, stream, false, plan.cluster);
}

}  // namespace

bool dependent_launch_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("GEMMLAB_DEPENDENT_LAUNCH");
    return !(v && std::string(v) == "0");
  }();
  return enabled;
}

Variant aligned_variant(const Problem& canonical_problem) {
  static const float aligned[4] = {};
  return variant_of(canonical_problem, aligned, aligned, aligned);
}

Variant call_variant(const KernelFamily& f, const ParamValues& v, const Problem& p, Variant var, bool whole_alignment) {
  // A family that reads its operands through TMA stages those TMA cannot read (tma_operands): their
  // alignment changes no instruction of its kernel, and C's alone selects the variant. (Where only
  // op(A) or op(B) was unaligned, whole alignment stored C a float at a time: 2047³ with ldc 2048
  // ran 409 us against 392, perf-log 103.)
  if (f.tma_operands(v).used()) var.a_vec = var.b_vec = var.c_vec;
  if (whole_alignment && !(var.a_vec && var.b_vec && var.c_vec)) var.a_vec = var.b_vec = var.c_vec = false;
  // After the alignment rule: the transposed product's C rows are the caller's columns (never stored
  // a row at a time), which says nothing about the operands' alignment.
  if (p.op == Op::gemm && f.transposes(v)) var.c_vec = false;
  return var;
}

Variant aligned_variant(const KernelFamily& f, const ParamValues& v, const Problem& p) {
  return call_variant(f, v, p, aligned_variant(family_problem(f, v, p)), false);
}

void launch(const LaunchPlan& plan, const float* a, const float* b, float* c, float alpha, float beta,
            cudaStream_t stream) {
  GemmArgs args = plan.args;
  args.a = plan.swap_operands ? b : a;
  args.b = plan.swap_operands ? a : b;
  args.c = c;
  args.alpha = alpha;
  args.beta = beta;
  const auto& g = plan.geometry;
  if (const auto& pk = plan.packed; pk.spec.int8()) {
    // Ozaki: the spread is a running maximum and the scan counts its blocks: both zeroed first. Both
    // passes take op(A) and op(B)ᵀ at once.
    auto* info = static_cast<ozaki::Info*>(pk.info);
    GEMMLAB_CUDA(cudaMemsetAsync(info, 0, ozaki::kInfoHeaderWords * sizeof(unsigned), stream));
    auto* planes = reinterpret_cast<signed char*>(pk.a);
    ozaki::PassArgs pass{{{args.a, args.a_row, args.a_col, pk.m, planes, info->exponent},
                          {args.b, args.b_col, args.b_row, pk.n, planes + pk.spec.planes * pk.m * pk.kp,
                           info->exponent + pk.m}},
                         pk.k,
                         pk.kp,
                         info};
    void* p[] = {&pass};
    const long long rows = std::max(pk.m, pk.n);
    const dim3 scan_grid(unsigned((rows + ozaki::kScanRows - 1) / ozaki::kScanRows), 1, 2);
    const dim3 residue_grid(unsigned(pk.kp / ozaki::kResidueColumns), unsigned((rows + 31) / 32), 2);
    launch_kernel(pk.scan, scan_grid, dim3(256), 0, p, stream, plan.dependent_launch);
    launch_kernel(pk.pack, residue_grid, dim3(256), 0, p, stream, plan.dependent_launch);
    args.extra = info;
    TensorMaps maps = pk.maps;
    launch_gemm(plan, args, maps, stream);
  } else if (const auto& pk = plan.packed; pk.spec.planes > 0) {
    // op(A) is M x K with (a_row, a_col); op(B)ᵀ is N x K with (b_col, b_row).
    auto pack = [&](const float* x, long long sr, long long sk, long long rows, float* out, int raw) {
      long long k = pk.k, kp = pk.kp;
      void* p[] = {&x, &sr, &sk, &rows, &k, &kp, &out, &raw};
      dim3 grid(unsigned((kp + 31) / 32), unsigned((rows + 31) / 32));
      launch_kernel(pk.pack, grid, dim3(256), 0, p, stream, plan.dependent_launch);
    };
    TensorMaps maps = pk.maps;
    if (pk.lda)
      encode_kmajor_map(maps.a, args.a, pk.m, pk.k, pk.lda, 1, pk.spec.box_m, pk.spec.box_k);
    else
      pack(args.a, args.a_row, args.a_col, pk.m, pk.a, pk.spec.a_raw);
    if (pk.ldb)
      encode_kmajor_map(maps.b, args.b, pk.n, pk.k, pk.ldb, 1, pk.spec.box_n, pk.spec.box_k);
    else
      pack(args.b, args.b_col, args.b_row, pk.n, pk.b, 0);
    launch_gemm(plan, args, maps, stream);
  } else if (plan.tma.used) {
    // The staged operands are copied to 16-byte rows first, in one launch (op(A) M x K, op(B)ᵀ N x K;
    // the copy's rows follow the operand's contiguous dimension).
    const auto& t = plan.tma;
    StagedRows copy{};
    unsigned copies = 0;
    auto read_from = [&](const float* x, const OperandStaging& st, float* staged) -> const float* {
      if (!st.pitch) return x;
      copy.operand[copies++] = {staged, x, st.stride, st.rows, st.row_floats};
      return staged;
    };
    TensorMaps maps;
    encode_operand_map(maps.a, read_from(args.a, t.stage_a, t.staged), t.a);
    encode_operand_map(maps.b, read_from(args.b, t.stage_b, t.staged + t.stage_a.floats()), t.b);
    if (copies) {
      void* args_stage[] = {&copy};
      launch_kernel(t.stage, dim3(t.stage_blocks, 1, copies), dim3(256), 0, args_stage, stream, plan.dependent_launch);
    }
    void* params[] = {&args, &maps};
    launch_kernel(plan.kernel, g.grid, g.block, g.shared_bytes, params, stream, false);
  } else {
    void* params[] = {&args};
    launch_kernel(plan.kernel, g.grid, g.block, g.shared_bytes, params, stream, false);
  }
  if (plan.reduce) {
    int splits = plan.splits;
    void* reduce_params[] = {&args, &splits};
    launch_kernel(plan.reduce, dim3(plan.reduce_blocks), dim3(256), 0, reduce_params, stream, plan.dependent_launch);
  }
}

FamilyLauncher::FamilyLauncher(const KernelFamily& f, ParamValues v, Ablation ablation)
    : family_(f), values_(std::move(v)), ablation_(ablation) {
  check_ablation(family_, values_, ablation_);
}

FamilyLauncher::~FamilyLauncher() = default;

void bind_staged(LaunchPlan& plan, float* buffer) { plan.tma.staged = buffer; }

void bind_packed(LaunchPlan& plan, float* buffer) {
  auto& pk = plan.packed;
  if (pk.spec.int8()) {
    auto* bytes = reinterpret_cast<unsigned char*>(buffer);
    const size_t a_bytes = size_t(pk.spec.planes) * size_t(pk.m) * size_t(pk.kp);
    const size_t planes_bytes = size_t(pk.spec.planes) * size_t(pk.m + pk.n) * size_t(pk.kp);
    pk.a = buffer;
    pk.b = reinterpret_cast<float*>(bytes + a_bytes);
    pk.info = bytes + planes_bytes;  // a multiple of 128 bytes: aligned
    encode_int8_planes_map(pk.maps.a, pk.a, pk.m, pk.kp, pk.spec.planes, pk.spec.box_m);
    encode_int8_planes_map(pk.maps.b, pk.b, pk.n, pk.kp, pk.spec.planes, pk.spec.box_n);
    return;
  }
  pk.a = pk.lda ? nullptr : buffer;
  pk.b = pk.ldb ? nullptr : buffer + (pk.lda ? 0 : size_t(pk.spec.planes_a()) * size_t(pk.m) * size_t(pk.kp));
  if (pk.a) encode_kmajor_map(pk.maps.a, pk.a, pk.m, pk.k, pk.kp, pk.spec.planes_a(), pk.spec.box_m, pk.spec.box_k);
  if (pk.b) encode_kmajor_map(pk.maps.b, pk.b, pk.n, pk.k, pk.kp, pk.spec.planes, pk.spec.box_n, pk.spec.box_k);
}

std::string FamilyLauncher::unsupported(const Problem& p) const {
  if (p.op != family_.op())
    return family_.name() + " is a " + to_string(family_.op()) + " family; this is a " + to_string(p.op) + " problem";
  return family_.unsupported(values_, family_problem(family_, values_, p));
}

size_t FamilyLauncher::workspace_bytes(const Problem& p) const {
  if (p.op != family_.op()) return 0;
  auto c = family_problem(family_, values_, p);
  // Before the kernel is loaded the wave is unknown: the family's stand-in decides the splits.
  size_t floats = size_t(family_.split_workspace_floats(values_, c, family_.splits(values_, c, 0), 0));
  if (auto spec = family_.packing(values_); spec.planes > 0) {
    PackedOperands pk{nullptr, nullptr, spec, packed_row(c.k, spec), c.m, c.n, c.k};
    floats += pk.floats();
  }
  // Staged copies, for operands at 16-byte aligned addresses.
  if (family_.tma_operands(values_).used()) floats += size_t(problem_staging(c).floats());
  return floats * sizeof(float) + size_t(family_.workspace_counters(values_, c)) * sizeof(unsigned);
}

LaunchPlan FamilyLauncher::plan(const Problem& p, const float* a, const float* b, const float* cptr,
                                bool shared_buffers, bool whole_alignment) {
  if (!device_) {
    int dev = 0;
    GEMMLAB_CUDA(cudaGetDevice(&dev));
    device_ = query_device(dev);
    const std::string cc = std::to_string(family_.min_arch() / 10) + "." + std::to_string(family_.min_arch() % 10);
    if (device_->arch() < family_.min_arch())
      throw UsageError(family_.name() + " needs compute capability " + cc + " or newer");
    if (family_.arch_specific() && device_->arch() != family_.min_arch())
      throw UsageError(family_.name() + " is built for sm_" + std::to_string(family_.min_arch()) +
                       "a and runs on compute capability " + cc + " only");
  }
  LaunchPlan plan;
  const bool transposed = p.op == Op::gemm && family_.transposes(values_);
  plan.swap_operands = swapped(p) != transposed;
  Problem c = family_problem(family_, values_, p);
  auto g = family_.geometry(values_, c);
  const Variant var = call_variant(family_, values_, p,
                                   variant_of(c, plan.swap_operands ? b : a, plan.swap_operands ? a : b, cptr),
                                   whole_alignment);
  const Loaded& k = load(var, g);
  last_ = &k;
  plan.kernel = k.kernel;
  plan.splits = family_.splits(values_, c, k.blocks_per_sm * device_->sms);
  g.grid.z = unsigned(plan.splits);
  plan.cluster = unsigned(family_.cluster(values_));
  plan.dependent_launch = device_->arch() >= 90 && dependent_launch_enabled();
  if (family_.persistent(values_)) {
    // A persistent block that is not resident runs its whole share after the others: size the grid
    // by what fits at once. Clusters need their blocks in one GPC, so fewer of them may fit than
    // SMs / cluster (the driver knows).
    unsigned resident = unsigned(std::max(1, k.blocks_per_sm) * device_->sms);
    if (plan.cluster > 1) {
      cudaLaunchAttribute attr = cluster_of(plan.cluster);
      cudaLaunchConfig_t config{dim3(plan.cluster * 1024u), g.block, g.shared_bytes, nullptr, &attr, 1};
      int clusters = 0;
      GEMMLAB_CUDA(cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<const void*>(k.kernel), &config));
      resident = unsigned(std::max(1, clusters)) * plan.cluster;
    }
    g.grid.x = std::min(g.grid.x, std::max(1u, resident / g.grid.z));
  }
  plan.geometry = g;
  auto sa = op_a_strides(c), sb = op_b_strides(c), sc = c_strides(canonical(p));
  if (transposed) std::swap(sc.row, sc.col);
  plan.args = GemmArgs{c.m, c.n, c.k, c.alpha, c.beta, nullptr, sa.row, sa.col, nullptr, sb.row, sb.col,
                       nullptr, sc.row, sc.col, nullptr, nullptr, nullptr};
  plan.workspace_floats =
      size_t(family_.split_workspace_floats(values_, c, plan.splits, k.blocks_per_sm * device_->sms));
  plan.counter_count = size_t(std::max(0ll, family_.workspace_counters(values_, c)));
  if (shared_buffers && plan.workspace_floats)
    plan.args.workspace = static_cast<float*>(workspace_.get(plan.workspace_floats * sizeof(float), false));
  if (shared_buffers && plan.counter_count)
    plan.args.counters = static_cast<unsigned*>(counters_.get(plan.counter_count * sizeof(unsigned), true));
  if (auto spec = family_.packing(values_); spec.planes > 0) {
    plan.packed = {k.pack, k.scan, spec, packed_row(c.k, spec), c.m, c.n, c.k};
    // In place: K-major with 16-byte rows (the aligned variant), as TMA needs.
    if ((spec.in_place || spec.a_raw) && sa.col == 1 && var.a_vec) plan.packed.lda = sa.row;
    if (spec.in_place && sb.row == 1 && var.b_vec) plan.packed.ldb = sb.col;
    if (shared_buffers) bind_packed(plan, static_cast<float*>(packed_.get(plan.packed.floats() * sizeof(float), false)));
  }
  if (auto t = family_.tma_operands(values_); t.used()) {
    // The operands' own addresses are known only per call: those TMA cannot read in place are staged.
    const float* ca = plan.swap_operands ? b : a;
    const float* cb = plan.swap_operands ? a : b;
    for (auto why : {operand_layout_problem(c.m, c.k, sa.row, sa.col, var.a_k_contig),
                     operand_layout_problem(c.n, c.k, sb.col, sb.row, !var.b_n_contig)})
      if (!why.empty()) throw UsageError(family_.name() + ": " + why);
    auto& tp = plan.tma;
    tp.used = true;
    tp.stage = k.stage;
    tp.stage_a = operand_staging(c.m, c.k, sa.row, sa.col, var.a_k_contig, ca);
    tp.stage_b = operand_staging(c.n, c.k, sb.col, sb.row, !var.b_n_contig, cb);
    // Blocks of 256 threads, each thread 4 quads in flight (hopper.cuh's stage_rows), at most 8 per SM.
    const long long quads = std::max(tp.stage_a.floats(), tp.stage_b.floats()) / 4;
    tp.stage_blocks = unsigned(std::min<long long>((quads + 1023) / 1024, 8ll * device_->sms));
    // A staged operand's descriptor: rows of `pitch` floats.
    auto described = [&t](long long outer, long long k, long long s_outer, long long s_k, bool k_contig,
                          const OperandStaging& st, int box_outer, bool swizzle) {
      if (st.pitch) s_outer = k_contig ? st.pitch : 1, s_k = k_contig ? 1 : st.pitch;
      return describe_operand_map(outer, k, s_outer, s_k, k_contig, box_outer, t.box_k, swizzle);
    };
    tp.a = described(c.m, c.k, sa.row, sa.col, var.a_k_contig, tp.stage_a, t.box_m, t.swizzle_a);
    tp.b = described(c.n, c.k, sb.col, sb.row, !var.b_n_contig, tp.stage_b, t.box_n, t.swizzle_b);
    if (shared_buffers && tp.staged_floats())
      bind_staged(plan, static_cast<float*>(staged_.get(tp.staged_floats() * sizeof(float), false)));
  }
  if (plan.splits > 1 && k.reduce) {
    plan.reduce = k.reduce;
    plan.reduce_blocks = unsigned(std::min<long long>((c.m * c.n + 255) / 256, 8ll * device_->sms));
  }
  return plan;
}

nlohmann::json FamilyLauncher::details() const {
  nlohmann::json j = {{"params", format_params(family_, values_)}};
  if (ablation_ != Ablation::none) j["ablation"] = to_string(ablation_);
  if (last_) {
    j["registers"] = last_->attrs.numRegs;
    j["static_smem_bytes"] = last_->attrs.sharedSizeBytes;
    j["dynamic_smem_bytes"] = last_->dynamic_smem;
    j["local_bytes"] = last_->attrs.localSizeBytes;
    j["occupancy"] = last_->occupancy;
    j["binary"] = last_->module.origin();
    j["compile_s"] = last_->module.compile_s();
  }
  return j;
}

CompileRequest kernel_request(const KernelFamily& f, const ParamValues& v, const Variant& var, Ablation a,
                              const DeviceInfo& d) {
  auto defines = compile_defines(f, v, var);
  for (auto& x : compile_defines(a)) defines.push_back(x);
  return {f.name(), f.source(), defines, arch_name(d.cc_major, d.cc_minor, f.arch_specific())};
}

CompileRequest kernel_request(const KernelFamily& f, const ParamValues& v, const Problem& p, const DeviceInfo& d) {
  return kernel_request(f, v, aligned_variant(f, v, p), Ablation::none, d);
}

FamilyLauncher::Loaded& FamilyLauncher::load(const Variant& v, const LaunchGeometry& g) {
  auto req = kernel_request(family_, values_, v, ablation_, *device_);
  std::string key;
  for (auto& d : req.options) key += d + " ";
  auto it = loaded_.find(key);
  if (it == loaded_.end()) {
    Loaded k{Module(req.program, req.source, req.options, req.arch)};
    k.kernel = k.module.kernel(family_.entry());
    if (auto spec = family_.packing(values_); spec.planes > 0) k.pack = k.module.kernel(spec.entry);
    if (auto spec = family_.packing(values_); spec.int8()) k.scan = k.module.kernel(spec.scan_entry);
    if (!family_.reduce_entry().empty()) k.reduce = k.module.kernel(family_.reduce_entry());
    if (auto t = family_.tma_operands(values_); t.used()) k.stage = k.module.kernel(t.stage_entry);
    GEMMLAB_CUDA(cudaFuncGetAttributes(&k.attrs, reinterpret_cast<const void*>(k.kernel)));
    it = loaded_.emplace(key, std::move(k)).first;
  }
  fit_shared(it->second, g);
  return it->second;
}

// Dynamic shared memory may depend on the problem (a GEMV's staged x): check it against the
// device, opt in above 48 KB, and keep the occupancy of the latest geometry.
void FamilyLauncher::fit_shared(Loaded& k, const LaunchGeometry& g) {
  if (g.shared_bytes == k.dynamic_smem && k.occupancy > 0) return;
  if (g.shared_bytes + k.attrs.sharedSizeBytes > device_->smem_per_block_optin)
    throw UsageError(family_.name() + " " + format_params(family_, values_) + " needs " +
                     std::to_string((g.shared_bytes + k.attrs.sharedSizeBytes + 1023) / 1024) +
                     " KB of shared memory, over the " + std::to_string(device_->smem_per_block_optin / 1024) +
                     " KB this GPU gives a block");
  if (g.shared_bytes > size_t(kStaticSharedLimit) && g.shared_bytes > k.opted_in) {  // above 48 KB a kernel must opt in
    GEMMLAB_CUDA(cudaKernelSetAttributeForDevice(k.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 int(g.shared_bytes), device_->ordinal));
    k.opted_in = g.shared_bytes;
  }
  int threads = int(g.block.x * g.block.y * g.block.z), blocks = 0;
  GEMMLAB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(k.kernel), threads,
                                                             g.shared_bytes));
  k.dynamic_smem = g.shared_bytes;
  k.blocks_per_sm = blocks;
  k.occupancy = double(blocks * threads) / device_->max_threads_per_sm;
}

void* FamilyLauncher::Buffer::get(size_t need, bool zeroed) {
  if (need > bytes) {
    GEMMLAB_CUDA(cudaFree(data));
    data = nullptr;
    bytes = 0;
    GEMMLAB_CUDA(cudaMalloc(&data, need));
    // Arrival counters start at zero, and every kernel leaves them so.
    if (zeroed) GEMMLAB_CUDA(cudaMemset(data, 0, need));
    bytes = need;
  }
  return data;
}

}  // namespace gemmlab
