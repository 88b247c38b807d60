#pragma once
// Graph-structure ops of the torch layer (registered as tessera::<name>; see graph_ops.cpp).
// Convention everywhere: CSR row i = in-neighbours of node i (targets are rows), as in the core.
#include <ATen/ATen.h>

#include <string>
#include <tuple>

namespace tessera::pt {

// int32 when every count fits, else int64: halves the index bytes the sparse kernels read.
at::ScalarType compact_index_type(int64_t nnz, int64_t rows, int64_t cols);

// edge_index [2, E] (row 0 = sources, row 1 = targets, PyG's convention) -> (rowptr, col, perm)
// with rows = targets; perm[k] = the edge (column of edge_index) stored at CSR entry k, so
// edge values map as values.index_select(0, perm). Duplicates are kept (PyG sums them).
std::tuple<at::Tensor, at::Tensor, at::Tensor> edge_index_to_csr(const at::Tensor& edge_index, int64_t num_rows,
                                                                 int64_t num_cols, bool compact = true);

// Transpose of the structure: (t_rowptr, t_col, perm) with t-entry j = original entry perm[j],
// so transposed values are values.index_select(0, perm); all three in the index type of col.
std::tuple<at::Tensor, at::Tensor, at::Tensor> csr_transpose(const at::Tensor& rowptr, const at::Tensor& col,
                                                             int64_t num_cols);

// PyG's gcn_norm on a CSR graph, differentiable w.r.t. values. self_loops:
//   "remaining"  existing loops keep their weight, other nodes get `fill` (edge_index inputs)
//   "replace"    existing loops dropped, every node gets `fill` (torch_sparse.fill_diag)
//   "append"     a `fill` loop added to every node, existing loops kept (torch.sparse inputs)
//   "none"       no loops added
// Then w'[k] = deg^-1/2[row] w[k] deg^-1/2[col], deg = weighted in-degree, 1/0 -> 0.
std::tuple<at::Tensor, at::Tensor, at::Tensor> gcn_norm(const at::Tensor& rowptr, const at::Tensor& col,
                                                        const c10::optional<at::Tensor>& values, int64_t num_cols,
                                                        const std::string& self_loops, double fill,
                                                        at::ScalarType dtype);

}  // namespace tessera::pt
