#include "kernels/tiled.hpp"

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

}  // namespace gemmlab::tiled
