// Graph-structure ops shared by every operator family: edge_index -> CSR, CSR transpose, GCN
// normalization, graph identities. They are composites of torch ops (one kernel for CPU and CUDA,
// differentiable where values are involved), registered as CompositeImplicitAutograd.
#include <torch/library.h>

#include <ATen/ATen.h>

#include <limits>
#include <string>
#include <tuple>

#include "boundary.hpp"
#include "graph_ops.hpp"
#include "views.hpp"
#include "tessera/core/error.hpp"
#include "tessera/graph/csr.hpp"

namespace tessera::pt {

namespace {
// Rows -> row id of every CSR entry (int64), from the offsets.
at::Tensor entry_rows(const at::Tensor& rowptr, int64_t nnz) {
  const int64_t rows = rowptr.size(0) - 1;
  auto counts = (rowptr.narrow(0, 1, rows) - rowptr.narrow(0, 0, rows)).to(at::kLong);
  auto out = at::repeat_interleave(counts);  // row i repeated counts[i] times
  TESSERA_CHECK(out.size(0) == nnz, "CSR offsets end at ", out.size(0), " but there are ", nnz, " column entries");
  return out;
}

// Offsets (rows + 1, int64) of sorted row ids.
at::Tensor offsets_from_rows(const at::Tensor& sorted_rows, int64_t rows) {
  auto rowptr = at::zeros({rows + 1}, sorted_rows.options().dtype(at::kLong));
  if (sorted_rows.numel() > 0) {
    auto counts = at::bincount(sorted_rows, {}, rows);
    rowptr.narrow(0, 1, rows).copy_(at::cumsum(counts, 0));
  }
  return rowptr;
}

at::Tensor stable_argsort(const at::Tensor& key) {
  return std::get<1>(at::sort(key, /*stable=*/true, /*dim=*/0, /*descending=*/false));
}

void check_index_range(const at::Tensor& idx, int64_t bound, const char* what) {
  if (idx.numel() == 0) return;
  const int64_t lo = idx.min().item<int64_t>();
  const int64_t hi = idx.max().item<int64_t>();
  if (lo >= 0 && hi < bound) return;
  const auto bad = at::nonzero((idx < 0).logical_or(idx >= bound)).flatten();
  const int64_t k = bad[0].item<int64_t>();
  fail("edge_index_to_csr: edge ", k, ": ", what, " ", idx[k].item<int64_t>(), " out of range [0, ", bound,
       ")");
}
}  // namespace

at::ScalarType compact_index_type(int64_t nnz, int64_t rows, int64_t cols) {
  const int64_t lim = std::numeric_limits<int32_t>::max();
  return (nnz < lim && rows < lim && cols < lim) ? at::kInt : at::kLong;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> edge_index_to_csr(const at::Tensor& edge_index, int64_t num_rows,
                                                                 int64_t num_cols, bool compact) {
  TESSERA_CHECK(edge_index.defined() && edge_index.dim() == 2 && edge_index.size(0) == 2,
                "edge_index_to_csr: edge_index must have shape [2, E] (row 0 = sources, row 1 = targets), got ",
                edge_index.sizes());
  TESSERA_CHECK(edge_index.scalar_type() == at::kLong || edge_index.scalar_type() == at::kInt,
                "edge_index_to_csr: edge_index must be int64 or int32, got ", c10::toString(edge_index.scalar_type()));
  TESSERA_CHECK(num_rows >= 0 && num_cols >= 0, "edge_index_to_csr: negative node count (", num_rows, ", ",
                num_cols, ")");
  const auto src = edge_index[0].to(at::kLong);
  const auto dst = edge_index[1].to(at::kLong);
  check_index_range(src, num_cols, "source");
  check_index_range(dst, num_rows, "target");
  // Sort by (target, source); stable so duplicate edges keep their order.
  auto perm = stable_argsort(dst * std::max<int64_t>(num_cols, 1) + src);
  auto rows_sorted = dst.index_select(0, perm);
  auto col = src.index_select(0, perm);
  auto rowptr = offsets_from_rows(rows_sorted, num_rows);
  const auto it = compact ? compact_index_type(col.numel(), num_rows, num_cols) : at::kLong;
  return {rowptr.to(it), col.to(it), perm};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> csr_transpose(const at::Tensor& rowptr, const at::Tensor& col,
                                                             int64_t num_cols) {
  check_csr_args(rowptr, col, "csr_transpose");
  TESSERA_CHECK(num_cols >= 0, "csr_transpose: number of columns must be >= 0, got ", num_cols);
  const int64_t rows = rowptr.size(0) - 1;
  const auto row = entry_rows(rowptr, col.size(0));
  const auto c = col.to(at::kLong);
  // Entries are sorted by row within the CSR, so a stable sort on the column alone gives the
  // (column, row) order of the transpose.
  auto perm = stable_argsort(c);
  auto t_col = row.index_select(0, perm);
  auto t_rowptr = offsets_from_rows(c.index_select(0, perm), num_cols);
  (void)rows;
  // perm in the index type too: the attention kernels read it as such, and an int32 graph's
  // memoized transpose holds 4 bytes per entry fewer (index_select takes either type).
  return {t_rowptr.to(rowptr.scalar_type()), t_col.to(col.scalar_type()), perm.to(col.scalar_type())};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> gcn_norm(const at::Tensor& rowptr, const at::Tensor& col,
                                                        const c10::optional<at::Tensor>& values, int64_t num_cols,
                                                        const std::string& self_loops, double fill,
                                                        at::ScalarType dtype) {
  check_csr_args(rowptr, col, "gcn_norm");
  TESSERA_CHECK(at::isFloatingType(dtype), "gcn_norm: dtype must be a floating type, got ", c10::toString(dtype));
  const int64_t n = rowptr.size(0) - 1;
  TESSERA_CHECK(n == num_cols, "gcn_norm: the graph must be square (nodes x nodes), got ", n, " x ", num_cols);
  TESSERA_CHECK(self_loops == "none" || self_loops == "remaining" || self_loops == "replace" ||
                    self_loops == "append",
                "gcn_norm: self_loops must be none, remaining, replace or append, got '", self_loops, "'");
  const int64_t nnz = col.size(0);
  auto row = entry_rows(rowptr, nnz);
  auto c = col.to(at::kLong);
  at::Tensor w;
  if (values && values->defined()) {
    TESSERA_CHECK(values->dim() == 1 && values->size(0) == nnz, "gcn_norm: values must have one entry per edge (",
                  nnz, "), got shape ", values->sizes());
    w = values->to(dtype);
  } else {
    w = at::ones({nnz}, rowptr.options().dtype(dtype));
  }
  at::Tensor rp = rowptr.to(at::kLong);
  if (self_loops != "none") {
    const auto loops = at::arange(n, c.options());
    auto loop_w = at::full({n}, fill, w.options());
    at::Tensor keep_row = row, keep_col = c, keep_w = w;
    if (self_loops != "append") {
      const auto is_loop = row.eq(c);
      const auto keep = is_loop.logical_not();
      if (self_loops == "remaining") {  // existing loops keep their weight (PyG add_remaining_self_loops)
        // Of duplicate loops the last (in edge order: the CSR sort is stable) wins, as in PyG on the
        // CPU. Selecting it explicitly keeps index_put free of duplicate indices, so the gradient
        // reaches exactly the entry the forward used.
        auto loop_rows = row.masked_select(is_loop);
        auto loop_vals = w.masked_select(is_loop);
        const int64_t m = loop_rows.size(0);
        if (m > 1) {
          auto last = at::ones({m}, loop_rows.options().dtype(at::kBool));
          last.narrow(0, 0, m - 1).copy_(loop_rows.narrow(0, 0, m - 1).ne(loop_rows.narrow(0, 1, m - 1)));
          loop_rows = loop_rows.masked_select(last);
          loop_vals = loop_vals.masked_select(last);
        }
        loop_w = loop_w.index_put({loop_rows}, loop_vals);
      }
      keep_row = row.masked_select(keep);
      keep_col = c.masked_select(keep);
      keep_w = w.masked_select(keep);
    }
    auto all_row = at::cat({keep_row, loops});
    auto all_col = at::cat({keep_col, loops});
    auto all_w = at::cat({keep_w, loop_w});
    auto perm = stable_argsort(all_row * std::max<int64_t>(n, 1) + all_col);
    row = all_row.index_select(0, perm);
    c = all_col.index_select(0, perm);
    w = all_w.index_select(0, perm);
    rp = offsets_from_rows(row, n);
  }
  // deg = weighted in-degree at the target (row); 1/sqrt(0) -> 0 as in PyG.
  auto deg = at::zeros({n}, w.options()).index_add(0, row, w);
  auto dis = deg.pow(-0.5);
  dis = dis.masked_fill(dis.isinf(), 0);
  auto out_w = dis.index_select(0, row) * w * dis.index_select(0, c);
  const auto it = rowptr.scalar_type();
  return {rp.to(it), c.to(it), out_w};
}

int64_t new_graph_id_op() { return static_cast<int64_t>(tessera::new_graph_id()); }

}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("edge_index_to_csr(Tensor edge_index, int num_rows, int num_cols, bool compact=True) -> (Tensor, Tensor, Tensor)", TESSERA_OP(tessera::pt::edge_index_to_csr));
  m.def("csr_transpose(Tensor rowptr, Tensor col, int num_cols) -> (Tensor, Tensor, Tensor)", TESSERA_OP(tessera::pt::csr_transpose));
  m.def("gcn_norm(Tensor rowptr, Tensor col, Tensor? values, int num_cols, str self_loops, float fill, "
        "ScalarType dtype) -> (Tensor, Tensor, Tensor)", TESSERA_OP(tessera::pt::gcn_norm));
  m.def("new_graph_id() -> int", TESSERA_OP(tessera::pt::new_graph_id_op));
}
