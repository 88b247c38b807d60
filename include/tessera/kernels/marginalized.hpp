#pragma once
// The marginalized graph kernel (random-walk similarity of labeled graphs), GraphDot convention.
//
// Graphs G (n nodes), G' (n'); A symmetric adjacency (weights, a self loop once on the diagonal);
// d_i = sum_j A_ij (d_i = 1 for isolated nodes); stopping probability q; start weights p.
//   D = diag(d_i d'_i' / (1-q)^2), V = diag(k_v(i,i')), W[(i,i'),(j,j')] = A_ij A'_i'j' k_e(e_ij, e'_i'j')
//   (D V^-1 - W) x = D 1,     K(G, G') = sum p_i p'_i' x_(i,i').
// The matrix is symmetric and strictly diagonally dominant, so PCG with the diagonal (Jacobi)
// preconditioner converges for every pair. The product matrix is never stored: the mat-vec walks
// pairs of 8x8 octiles (octile.hpp). Graphs are reordered (RCM by default) to reduce the number of
// non-empty octiles; the order is undone in every per-node output.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/core/dense.hpp"
#include "tessera/core/device.hpp"
#include "tessera/core/dtype.hpp"
#include "tessera/graph/dataset.hpp"
#include "tessera/kernels/base_kernel.hpp"
#include "tessera/kernels/octile.hpp"
#include "tessera/reorder/permutation.hpp"

namespace tessera::kernels {

// Which tile-pair product the mat-vec uses; `automatic` picks per tile pair by occupancy.
enum class TilePath : uint8_t { automatic, sparse, dense };

struct Options {
  BaseKernel node_kernel = BaseKernel::Constant(1.0);
  BaseKernel edge_kernel = BaseKernel::Constant(1.0);
  double q = 0.05;                 // stopping probability, (0, 1)
  double start = 1.0;              // default start weight p of every node (> 0)
  double tol = 0;                  // PCG: stop when |r| <= tol |b|; 0 = 1e-12 (f64) / 1e-6 (f32)
  int max_iter = 4000;
  DType dtype = DType::f64;        // f32 or f64 solver arithmetic (dot products always in f64)
  reorder::Method reorder = reorder::Method::rcm;
  TilePath path = TilePath::automatic;
  bool normalize = false;          // Gram: K(G,G') / sqrt(K(G,G) K(G',G'))
  int lmin = 0;                    // 1: subtract the single-vertex term sum p p' k_v
  Device device{};                 // cpu or cuda
  void* stream = nullptr;          // CUDA stream (nullptr = per-thread stream)
  int threads = 0;                 // CPU threads, 0 = OpenMP default
  // Called from one thread as pairs finish (done, total); may be empty.
  std::function<void(int64_t, int64_t)> progress;

  void validate() const;           // throws tessera::Error naming the bad option
  double tolerance() const { return tol > 0 ? tol : (dtype == DType::f32 ? 1e-6 : 1e-12); }
};

struct SolveStats {
  int iterations = 0;
  double residual = 0;             // final |r| / |b|
  bool converged = false;
};

struct PairRequest {
  bool nodal = false;              // x reshaped n x n', scaled by p_i p'_i'
  bool gradient = false;           // dK / d(every hyperparameter) and dK / dp, dK / dp'
  const std::vector<double>* p1 = nullptr;  // start weights of G (n), nullptr = options.start
  const std::vector<double>* p2 = nullptr;  // start weights of G' (n')
};

struct PairResult {
  double value = 0;
  SolveStats stats;                // of the primal solve
  SolveStats adjoint;              // of the adjoint solve (gradient requests)
  Dense<double> nodal;             // n x n' in the caller's node order (when requested)
  std::vector<double> gradient;    // one per hyperparameter_names() entry
  std::vector<double> grad_p1, grad_p2;  // dK/dp_i, dK/dp'_i' in the caller's order
  double matvec_flops = 0;         // useful multiply-adds x 2 of all mat-vecs
};

struct FailedPair {
  int64_t i = 0, j = 0;
  SolveStats stats;
};

struct GramStats {
  int64_t pairs = 0;               // solved pairs (i <= j only for a symmetric Gram)
  int64_t converged = 0;
  int max_iterations = 0;
  double mean_iterations = 0;
  double max_residual = 0;
  double seconds = 0;
  double matvec_flops = 0;         // useful: 2 x nnz x nnz' (+ 2 x n n') per mat-vec, as a direct product
  double matvec_flops_executed = 0;  // as executed (the CUDA dense tile path factors the product)
  // The mat-vec kernels alone, on the pairs the CUDA backend solves with the whole grid (large
  // pairs; 0 elsewhere): GPU time between events around each mat-vec, and their executed flops.
  double matvec_kernel_seconds = 0;
  double matvec_kernel_flops_executed = 0;
  std::vector<FailedPair> failed;  // pairs that hit max_iter: reported, never silent
  double pairs_per_second() const { return seconds > 0 ? double(pairs) / seconds : 0; }
};

struct GramResult {
  Dense<double> K;                      // rows x cols
  std::vector<Dense<double>> gradient;  // per hyperparameter (when requested): dK / dtheta
  Dense<int32_t> iterations;            // PCG iterations per pair
  GramStats stats;
};

// A graph ready for the solver: reordered, octiles built, degrees, features in the new order.
struct PreparedGraph {
  int64_t n = 0;
  reorder::Permutation perm;            // caller's order -> solver order
  OctileGraph tiles;
  std::vector<double> degree;           // d_i (new order), 1 for isolated nodes
  std::vector<int32_t> node_label;      // new order (zeros when the graph has none)
  std::vector<float> node_attr;         // n x attr_dim, new order
  int attr_dim = 0;
};

// Edge base kernel tabulated over the distinct edge labels of a collection: octile nonzeros hold
// a label id, so the inner loop is a table lookup (CPU and GPU alike).
struct EdgeTable {
  std::vector<int32_t> labels;          // sorted distinct edge labels
  std::vector<double> value;            // L x L
  std::vector<double> grad;             // hyper x L x L
  int size() const { return int(labels.size()); }
  uint16_t id(int32_t label) const;     // throws when label is not in the table
};

class MarginalizedGraphKernel {
 public:
  explicit MarginalizedGraphKernel(Options options);
  const Options& options() const { return opt_; }

  // Node-kernel terms, then edge-kernel terms, then "q".
  std::vector<std::string> hyperparameter_names() const;
  int num_hyperparameters() const;

  PairResult pair(const LabeledGraph& g1, const LabeledGraph& g2, const PairRequest& req = {}) const;
  // Symmetric Gram matrix of one collection: solves i <= j only, mirrors the rest.
  GramResult gram(const std::vector<LabeledGraph>& graphs, bool gradient = false) const;
  // Cross Gram matrix rows x cols (normalization uses each graph's self-similarity).
  GramResult gram(const std::vector<LabeledGraph>& rows, const std::vector<LabeledGraph>& cols,
                  bool gradient = false) const;
  // K(G, G) of every graph (unnormalized; all ones when options.normalize).
  std::vector<double> diag(const std::vector<LabeledGraph>& graphs) const;

  EdgeTable edge_table(const std::vector<const LabeledGraph*>& graphs) const;
  PreparedGraph prepare(const LabeledGraph& g, const EdgeTable& table) const;

 private:
  Options opt_;
};

// The oracle: assembles the dense n n' x n n' system from the unreordered graphs and solves it by
// Cholesky in double precision. Small graphs only (n n' <= 4096). Returns value and nodal.
PairResult reference_pair(const LabeledGraph& g1, const LabeledGraph& g2, const Options& options,
                          const std::vector<double>* p1 = nullptr, const std::vector<double>* p2 = nullptr);

// Checks a labeled graph: square symmetric adjacency, finite positive weights, label and
// attribute arrays of matching length. Throws tessera::Error naming graph `index` and the problem.
void validate_graph(const LabeledGraph& g, int64_t index);

}  // namespace tessera::kernels
