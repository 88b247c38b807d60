#pragma once
// tessera::pt::Graph: a sparse graph for the torch layer (C++ API; Python mirrors it in
// python/tessera/graph.py). Rows are targets: row i holds the in-neighbours of node i, so
// Y = A X aggregates messages at their targets (PyG's source_to_target flow).
//
// A Graph is a cheap handle: copies share one state, which holds the tensors, an identity from
// tessera::new_graph_id() (the key of the core's per-graph caches and of this layer's memos), and
// memoized derived forms: the transpose (for backward) and normalized versions (GCN). Memos
// live exactly as long as the graph, so a cache keyed by "this graph" is the graph itself.
// A Graph is immutable: build a new one instead of editing its tensors.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <utility>

#include "tessera/graph/csr.hpp"

namespace tessera::pt {

class Graph {
 public:
  Graph() = default;

  // edge_index [2, E] (sources; targets), optional weight per edge. num_src < 0: = num_nodes.
  static Graph from_edge_index(const torch::Tensor& edge_index, const c10::optional<torch::Tensor>& edge_weight,
                               int64_t num_nodes, int64_t num_src = -1);
  // CSR tensors (rows = targets); values optional (aligned with col).
  static Graph from_csr(torch::Tensor rowptr, torch::Tensor col, c10::optional<torch::Tensor> values,
                        int64_t num_cols);
  // A core graph (host) copied into tensors on `device`, int32 indices when they fit.
  template <class I>
  static Graph from_core(const Csr<I>& g, const torch::Device& device = torch::kCPU);

  bool defined() const { return s_ != nullptr; }
  const torch::Tensor& rowptr() const;
  const torch::Tensor& col() const;
  const torch::Tensor& values() const;  // undefined = unweighted
  bool weighted() const { return values().defined(); }
  int64_t rows() const;
  int64_t cols() const;
  int64_t nnz() const { return col().size(0); }
  uint64_t id() const;
  torch::Device device() const { return rowptr().device(); }

  // Same graph on another device (a new identity; memos are not carried over).
  Graph to(const torch::Device& device) const;

  // Structure of A^T, built once per graph (memoized). perm maps transposed entries to entries
  // (in the graph's index type, like col).
  struct Transpose {
    torch::Tensor rowptr, col, perm;
    uint64_t id = 0;
  };
  const Transpose& transpose() const;
  // The graph's own values in the transpose's entry order (values[perm]), memoized while the values
  // are unchanged (their version counter); undefined for an unweighted graph. dX's SpMM reads them.
  torch::Tensor transposed_values() const;

  // Undefined when every row has an entry, else a float32 [rows, 1] mask, 1 on the rows that have
  // one (memoized: the answer costs one device-to-host copy per graph).
  torch::Tensor nonempty_rows() const;

  // PyG's gcn_norm (see graph_ops.hpp for self_loops modes). memo = true keeps the result on
  // this graph (keyed by the options), unless the values require grad (then the result carries
  // autograd history and must be rebuilt per forward).
  Graph gcn_normalized(const std::string& self_loops, double fill, torch::ScalarType dtype, bool memo) const;

 private:
  struct State;
  std::shared_ptr<State> s_;
};

// edge_index's graph (as Graph::from_edge_index, unweighted) and per-edge data edge_attr ([E] or
// [E, ...], one row per column of edge_index) with its rows in the graph's entry order, the order
// in which the attention layers take edge features (a Graph sorts the edges by target).
std::pair<Graph, torch::Tensor> graph_and_edge_attr(const torch::Tensor& edge_index, const torch::Tensor& edge_attr,
                                                    int64_t num_nodes, int64_t num_src = -1);

// Y = A X (+ bias) (autograd-aware: dX via the memoized transpose, d(values) via SDDMM, d(bias)
// = column sums of dY). `values` overrides the graph's own values when given; `bias` [F] is
// added to every row inside the SpMM.
torch::Tensor spmm(const Graph& g, const torch::Tensor& x, const c10::optional<torch::Tensor>& values = {},
                   const c10::optional<torch::Tensor>& bias = {});

}  // namespace tessera::pt
