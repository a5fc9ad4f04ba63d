#include "kernels/tiled.hpp"

#include <algorithm>

namespace gemmlab::tiled {

void chunk_violations(std::vector<std::string>& out, int bm, int bn, int bk, int tm, int tn, int threads) {
  auto s = [](int v) { return std::to_string(v); };
  if (tm % 4 || tn % 4) out.push_back("vpt " + s(tm) + "x" + s(tn) + " must be multiples of 4 (16-byte fragments)");
  if (bm % 4 || bn % 4 || bk % 4)
    out.push_back("tile " + s(bm) + "x" + s(bn) + "x" + s(bk) + " must be multiples of 4 (16-byte chunks)");
  if (threads < 32 || threads > kMaxThreadsPerBlock)
    out.push_back(s(threads) + " threads per block, outside 32.." + s(kMaxThreadsPerBlock));
  else if ((bm * bk / 4) % threads || (bn * bk / 4) % threads)
    out.push_back("the " + s(bm) + "x" + s(bk) + " and " + s(bn) + "x" + s(bk) +
                  " tiles do not split into 4-element chunks evenly among " + s(threads) + " threads");
  // Accumulators, fragments, load staging and ~24 for addresses and indices.
  int regs = tm * tn + tm + tn + 24;
  if (auto r = register_violation(regs); !r.empty()) out.push_back(r);
  else if (regs * threads > 65536)
    out.push_back("needs about " + s(regs * threads) + " registers per block, over the 65536 of an SM");
}

long long kstage_smem(const ParamValues& v, int stages) {
  auto& t = v.at("tile");
  int pad = v.at("conflict")[0] == 1 ? 4 : 0;
  return 4ll * stages * t[2] * (t[0] + pad + t[1] + pad);
}

void kstage_violations(std::vector<std::string>& out, const ParamValues& v, int threads, int stages) {
  auto &t = v.at("tile"), &r = v.at("vpt");
  chunk_violations(out, t[0], t[1], t[2], r[0], r[1], threads);
  if (v.at("conflict")[0] == 2 && (t[0] % 32 || t[1] % 32))
    out.push_back("swizzle needs tile.m and tile.n multiples of 32 (8 chunks of 4 per row)");
  if (auto e = shared_memory_violation(kstage_smem(v, stages)); !e.empty()) out.push_back(e);
}

void mma_tile_violations(std::vector<std::string>& out, const ParamValues& v, int mma_k, long long smem, int regs) {
  auto s = [](long long x) { return std::to_string(x); };
  auto &t = v.at("tile"), &w = v.at("warp");
  const size_t before = out.size();
  if (w[0] % 16 || w[1] % 8) out.push_back("warp " + s(w[0]) + "x" + s(w[1]) + " is not a multiple of the 16x8 mma tile");
  if (t[0] % w[0] || t[1] % w[1])
    out.push_back("tile " + s(t[0]) + "x" + s(t[1]) + " is not a multiple of warp " + s(w[0]) + "x" + s(w[1]));
  if (t[2] % mma_k) out.push_back("tile.k " + s(t[2]) + " is not a multiple of the mma's k of " + s(mma_k));
  if (out.size() != before) return;
  const int nt = (t[0] / w[0]) * (t[1] / w[1]) * 32;
  if (nt > kMaxThreadsPerBlock) out.push_back(s(nt) + " threads per block, over the limit of 1024");
  // Both copy paths (16-byte chunks, single floats) must split evenly among the threads.
  if ((t[0] * t[2] / 4) % nt || (t[1] * t[2] / 4) % nt)
    out.push_back("the " + s(t[0]) + "x" + s(t[2]) + " and " + s(t[1]) + "x" + s(t[2]) +
                  " tiles do not split into 16-byte chunks evenly among " + s(nt) + " threads");
  if (auto e = shared_memory_violation(smem); !e.empty()) out.push_back(e);
  if (auto e = register_violation(regs); !e.empty()) out.push_back(e);
  else if (regs * nt > 65536)
    out.push_back("needs about " + s(regs * nt) + " registers per block, over the 65536 of an SM");
}

bool vpt_divides_tile(std::vector<std::string>& out, const ParamValues& v) {
  auto &t = v.at("tile"), &r = v.at("vpt");
  if (t[0] % r[0] == 0 && t[1] % r[1] == 0) return true;
  out.push_back("tile " + std::to_string(t[0]) + "x" + std::to_string(t[1]) + " is not a multiple of vpt " +
                std::to_string(r[0]) + "x" + std::to_string(r[1]));
  return false;
}

bool warp_tile_fits(std::vector<std::string>& out, const ParamValues& v) {
  auto s = [](int x) { return std::to_string(x); };
  auto &t = v.at("tile"), &w = v.at("warp"), &r = v.at("vpt");
  const size_t before = out.size();
  if (t[0] % w[0] || t[1] % w[1])
    out.push_back("tile " + s(t[0]) + "x" + s(t[1]) + " is not a multiple of warp " + s(w[0]) + "x" + s(w[1]));
  if (w[0] % r[0] || w[1] % r[1])
    out.push_back("warp " + s(w[0]) + "x" + s(w[1]) + " is not a multiple of vpt " + s(r[0]) + "x" + s(r[1]));
  if (out.size() == before && (w[0] / r[0]) * (w[1] / r[1]) != 32)
    out.push_back("warp / vpt = " + s(w[0] / r[0]) + "x" + s(w[1] / r[1]) + " lanes, not the 32 of a warp");
  return out.size() == before;
}

int grid_threads(const ParamValues& v) { return (v.at("tile")[0] / v.at("vpt")[0]) * (v.at("tile")[1] / v.at("vpt")[1]); }

double strided_warp_inst(long long n, int nt) {
  double total = 0;
  for (int first = 0; first < nt; first += 32)
    if (first < n) total += double((n - first + nt - 1) / nt);
  return total;
}

int merged_loads(int len, int align) {
  if (align % 4 == 0) return len / 4 + (len % 4) / 2 + len % 2;
  if (align % 2 == 0) return len / 2 + len % 2;
  return len;
}

Tiling tiling(const Problem& p, int bm, int bn, int bk) {
  return {double((p.m + bm - 1) / bm) * double((p.n + bn - 1) / bn), double((p.k + bk - 1) / bk)};
}

long long tail_counters(const Problem& p, int bm, int bn, int splits, bool stream) {
  return splits > 1 || stream ? ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn) : 0;
}

long long tail_workspace_floats(const Problem& p, int bm, int bn, int splits, int resident, bool stream) {
  const long long tiles = tail_counters(p, bm, bn, splits, stream);
  // The stream's slots: one per block and one per tile of its last two waves (tail::Schedule::slots);
  // before the grid is known, as if it had a block per tile.
  if (stream) return (resident > 0 ? resident + std::min<long long>(tiles, 2ll * resident) : 3 * tiles) * bm * bn;
  return (resident > 0 ? std::min<long long>(tiles, resident) : tiles) * bm * bn * splits;
}

long long TailFamily::workspace_counters(const ParamValues& v, const Problem& p) const {
  return tail_counters(p, v.at("tile")[0], v.at("tile")[1], v.at("splitk")[0], stream(v));
}

long long TailFamily::split_workspace_floats(const ParamValues& v, const Problem& p, int splits, int resident) const {
  return tail_workspace_floats(p, v.at("tile")[0], v.at("tile")[1], splits, resident, stream(v));
}

void TailFamily::add_tail_params(std::vector<ParamSpec>& params, int max_splits) {
  params.push_back({"splitk", {1}, 1, max_splits,
                    "split tail: the tiles of the last, partial wave (every tile when there are fewer tiles than "
                    "SMs) have their K split this many ways, the partial sums added by the last split to finish"});
  params.push_back({"tail", {0}, 0, 1,
                    "the tiles past the whole waves: split (splitk, above), or streamed (stream-K: the last whole "
                    "wave and the partial one as one run of K tiles, an equal share of it per block, a tile's parts "
                    "added by its last part to finish)",
                    {"split", "stream"}});
}

void TailFamily::tail_violations(std::vector<std::string>& out, const ParamValues& v) {
  if (stream(v) && v.at("splitk")[0] > 1)
    out.push_back("splitk " + std::to_string(v.at("splitk")[0]) +
                  " needs tail=split (the stream shares K out by itself)");
}

void add_epilogue(KernelModel& m, const Problem& p, double stores) {
  m.global_store_inst = stores;
  m.global_store_bytes = 4.0 * double(p.m) * double(p.n);
  if (p.beta != 0.0f) {
    m.global_load_inst += stores;
    m.global_load_bytes += m.global_store_bytes;
  }
}

KernelModel direct_model(const Problem& p, const LaunchGeometry& g) {
  const double warps = double(g.grid.x) * g.grid.y * warps_of(int(g.block.x * g.block.y));
  KernelModel m;
  m.global_load_inst = 2 * warps * double(p.k);
  m.global_load_bytes = 8.0 * double(p.m) * double(p.n) * double(p.k);
  m.shared_load_inst = m.shared_store_inst = m.shared_load_bytes = 0;
  add_epilogue(m, p, warps);
  m.assumptions = {"edge blocks counted as full warps"};
  return m;
}

KernelModel chunked_model(const Problem& p, const Variant& var, int bm, int bn, int bk, int tm, int tn, int threads,
                          bool async) {
  KernelModel m;
  const auto t = tiling(p, bm, bn, bk);
  const double steps = t.blocks * t.ktiles;
  const int warps = warps_of(threads);
  // An operand's OUTER x BK tile: contig_k says which dimension is contiguous, vec whether
  // 16-byte accesses are aligned.
  double ldg = 0, ldgsts = 0, sts = 0;
  auto operand = [&](int outer, bool contig_k, bool vec) {
    const double chunks = double(outer) * bk / 4 / threads;  // per thread
    if (async) {
      ldgsts += vec && !contig_k ? chunks : 4 * chunks;  // 16-byte copies, else 4-byte ones
    } else {
      ldg += vec ? chunks : 4 * chunks;
      sts += contig_k ? 4 * chunks : chunks;  // transposing scalar stores, else one 16-byte store
    }
  };
  operand(bm, var.a_k_contig, var.a_vec);
  operand(bn, !var.b_n_contig, var.b_vec);
  m.global_load_inst = steps * warps * ldg;
  m.global_async_inst = steps * warps * ldgsts;
  m.shared_store_inst = steps * warps * sts;
  m.global_load_bytes = steps * 4.0 * double(bm + bn) * bk;
  m.shared_load_inst = steps * warps * bk * double(tm + tn) / 4;
  m.shared_load_bytes = steps * threads * 4.0 * bk * double(tm + tn);
  add_epilogue(m, p, t.blocks * warps * double(tm) * tn / 4 * (var.c_vec ? 1 : 4));
  m.assumptions.push_back("edge tiles counted like interior ones (their partial chunks take scalar loads)");
  return m;
}

}  // namespace gemmlab::tiled
