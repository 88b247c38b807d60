#pragma once
// Internal: solving a batch of graph pairs, shared by the Gram driver, the CPU backend and the
// CUDA backend (src/cuda/kernels/). Not installed.
#include <cstdint>
#include <vector>

#include "tessera/kernels/marginalized.hpp"

namespace tessera::kernels::detail {

struct PairJob {
  int32_t a = 0, b = 0;            // indices into the prepared-graph lists (left, right)
};

struct JobOutput {
  double value = 0;                // K (with lmin applied), unnormalized
  SolveStats stats;
  std::vector<double> gradient;    // when requested: node hypers, edge hypers, q
  double flops = 0;                // useful arithmetic of all mat-vecs: 2 x nnz x nnz' + 2 x size each
  double exec_flops = 0;           // arithmetic as executed (the CUDA dense path needs less)
  double matvec_seconds = 0;       // CUDA grid-wide pairs: GPU time of the mat-vec kernels (events)
  double matvec_kernel_flops = 0;  // and their executed arithmetic
};

struct BatchInput {
  const std::vector<PreparedGraph>* left = nullptr;
  const std::vector<PreparedGraph>* right = nullptr;
  const EdgeTable* table = nullptr;
  const Options* options = nullptr;
  bool gradient = false;
};

// One pair on the CPU, with everything PairResult can carry (nodal in solver order).
struct CpuPairOutput {
  JobOutput out;
  SolveStats adjoint;
  std::vector<double> nodal;       // n x n' in solver order (when requested)
  std::vector<double> grad_p1, grad_p2;  // solver order
};
CpuPairOutput solve_pair_cpu(const PreparedGraph& g1, const PreparedGraph& g2, const EdgeTable& table,
                             const Options& opt, const std::vector<double>& p1,
                             const std::vector<double>& p2, bool nodal, bool gradient, bool parallel_inside);

// Solves every job; progress(done) is called from the calling thread.
void solve_batch_cpu(const BatchInput& in, const std::vector<PairJob>& jobs, std::vector<JobOutput>& out);
#ifdef TESSERA_WITH_CUDA
void solve_batch_cuda(const BatchInput& in, const std::vector<PairJob>& jobs, std::vector<JobOutput>& out);
#endif

}  // namespace tessera::kernels::detail
