#include "tessera/torch/graph.hpp"

#include <map>
#include <mutex>
#include <tuple>

#include "graph_ops.hpp"
#include "spmm_op.hpp"
#include "tessera/core/error.hpp"

namespace tessera::pt {

struct Graph::State {
  torch::Tensor rowptr, col, values;
  int64_t rows = 0, cols = 0;
  uint64_t id = 0;
  std::mutex mu;                                   // guards the memos
  std::unique_ptr<Transpose> transpose;
  torch::Tensor t_values;                          // values[transpose->perm] at version t_values_version
  int64_t t_values_version = -1;
  std::map<std::string, Graph> normalized;         // key: self_loops|fill|dtype
  bool nonempty_known = false;                     // memo of nonempty_rows()
  torch::Tensor nonempty;                          // its answer (undefined: no empty row)
};

Graph Graph::from_csr(torch::Tensor rowptr, torch::Tensor col, c10::optional<torch::Tensor> values,
                      int64_t num_cols) {
  TESSERA_CHECK(rowptr.dim() == 1 && rowptr.size(0) >= 1 && col.dim() == 1,
                "Graph: rowptr must be 1-D with rows + 1 entries and col 1-D");
  TESSERA_CHECK(rowptr.device() == col.device(), "Graph: rowptr and col are on different devices");
  Graph g;
  g.s_ = std::make_shared<State>();
  g.s_->rowptr = rowptr.contiguous();
  g.s_->col = col.contiguous();
  if (values && values->defined()) {
    TESSERA_CHECK(values->dim() == 1 && values->size(0) == col.size(0), "Graph: values must have one entry per edge (",
                  col.size(0), "), got shape ", values->sizes());
    g.s_->values = *values;
  }
  g.s_->rows = rowptr.size(0) - 1;
  g.s_->cols = num_cols;
  g.s_->id = new_graph_id();
  return g;
}

namespace {
// edge_index as CSR tensors (rows = targets) and per-edge data (one row per column of edge_index,
// 1-D when `vector`; or undefined) permuted into the CSR's entry order. `what` starts the error.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> csr_with_edge_data(const torch::Tensor& edge_index,
                                                                           const torch::Tensor& data, int64_t rows,
                                                                           int64_t cols, bool vector, const char* what) {
  auto [rowptr, col, perm] = edge_index_to_csr(edge_index, rows, cols, true);
  if (!data.defined()) return {rowptr, col, {}};
  TESSERA_CHECK((vector ? data.dim() == 1 : data.dim() >= 1) && data.size(0) == edge_index.size(1), what, " (",
                edge_index.size(1), "), got shape ", data.sizes());
  return {rowptr, col, data.index_select(0, perm)};
}
}  // namespace

Graph Graph::from_edge_index(const torch::Tensor& edge_index, const c10::optional<torch::Tensor>& edge_weight,
                             int64_t num_nodes, int64_t num_src) {
  if (num_src < 0) num_src = num_nodes;
  auto [rowptr, col, values] = csr_with_edge_data(edge_index, edge_weight.value_or(torch::Tensor()), num_nodes, num_src,
                                                  true, "Graph: edge_weight must have one entry per edge");
  return from_csr(rowptr, col, values, num_src);
}

std::pair<Graph, torch::Tensor> graph_and_edge_attr(const torch::Tensor& edge_index, const torch::Tensor& edge_attr,
                                                    int64_t num_nodes, int64_t num_src) {
  TESSERA_CHECK(edge_attr.defined(), "graph_and_edge_attr: edge_attr is undefined");
  if (num_src < 0) num_src = num_nodes;
  auto [rowptr, col, ea] = csr_with_edge_data(edge_index, edge_attr, num_nodes, num_src, false,
                                              "graph_and_edge_attr: edge_attr must have one row per edge");
  return {Graph::from_csr(rowptr, col, {}, num_src), ea};
}

template <class I>
Graph Graph::from_core(const Csr<I>& g, const torch::Device& device) {
  const auto it = compact_index_type(g.nnz(), g.rows, g.cols);
  auto i64 = torch::TensorOptions().dtype(torch::kLong);
  std::vector<int64_t> rp(g.rowptr.begin(), g.rowptr.end()), c(g.col.begin(), g.col.end());
  auto rowptr = torch::tensor(rp, i64).to(it);
  auto col = torch::tensor(c, i64).to(it);
  c10::optional<torch::Tensor> values;
  if (g.weighted()) values = torch::tensor(g.values, torch::kFloat).to(device);
  return from_csr(rowptr.to(device), col.to(device), values, g.cols);
}
template Graph Graph::from_core<int32_t>(const Csr<int32_t>&, const torch::Device&);
template Graph Graph::from_core<int64_t>(const Csr<int64_t>&, const torch::Device&);

#define TESSERA_GRAPH_STATE() \
  TESSERA_CHECK(s_ != nullptr, "Graph: use of an empty (default-constructed) graph")
const torch::Tensor& Graph::rowptr() const { TESSERA_GRAPH_STATE(); return s_->rowptr; }
const torch::Tensor& Graph::col() const { TESSERA_GRAPH_STATE(); return s_->col; }
const torch::Tensor& Graph::values() const { TESSERA_GRAPH_STATE(); return s_->values; }
int64_t Graph::rows() const { TESSERA_GRAPH_STATE(); return s_->rows; }
int64_t Graph::cols() const { TESSERA_GRAPH_STATE(); return s_->cols; }
uint64_t Graph::id() const { TESSERA_GRAPH_STATE(); return s_->id; }

Graph Graph::to(const torch::Device& device) const {
  TESSERA_GRAPH_STATE();
  c10::optional<torch::Tensor> v;
  if (s_->values.defined()) v = s_->values.to(device);
  return from_csr(s_->rowptr.to(device), s_->col.to(device), v, s_->cols);
}

const Graph::Transpose& Graph::transpose() const {
  TESSERA_GRAPH_STATE();
  std::lock_guard<std::mutex> lock(s_->mu);
  if (!s_->transpose) {
    auto [rp, c, perm] = csr_transpose(s_->rowptr, s_->col, s_->cols);
    s_->transpose = std::make_unique<Transpose>(Transpose{rp, c, perm, new_graph_id()});
  }
  return *s_->transpose;
}

torch::Tensor Graph::nonempty_rows() const {
  TESSERA_GRAPH_STATE();
  std::lock_guard<std::mutex> lock(s_->mu);
  if (!s_->nonempty_known) {
    const int64_t n = s_->rows;
    const torch::Tensor mask = s_->rowptr.slice(0, 1, n + 1) != s_->rowptr.slice(0, 0, n);
    if (!mask.all().item<bool>()) s_->nonempty = mask.view({-1, 1}).to(torch::kFloat);
    s_->nonempty_known = true;
  }
  return s_->nonempty;
}

torch::Tensor Graph::transposed_values() const {
  TESSERA_GRAPH_STATE();
  if (!s_->values.defined()) return {};
  const Transpose& t = transpose();
  std::lock_guard<std::mutex> lock(s_->mu);
  const int64_t version = int64_t(s_->values._version());
  if (!s_->t_values.defined() || s_->t_values_version != version) {
    torch::NoGradGuard no_grad;
    s_->t_values = s_->values.index_select(0, t.perm);
    s_->t_values_version = version;
  }
  return s_->t_values;
}

Graph Graph::gcn_normalized(const std::string& self_loops, double fill, torch::ScalarType dtype, bool memo) const {
  TESSERA_GRAPH_STATE();
  const bool trainable = s_->values.defined() && s_->values.requires_grad();
  memo = memo && !trainable;
  const std::string key = self_loops + "|" + std::to_string(fill) + "|" + c10::toString(dtype);
  if (memo) {
    std::lock_guard<std::mutex> lock(s_->mu);
    auto it = s_->normalized.find(key);
    if (it != s_->normalized.end()) return it->second;
  }
  c10::optional<torch::Tensor> v;
  if (s_->values.defined()) v = s_->values;
  auto [rp, c, w] = gcn_norm(s_->rowptr, s_->col, v, s_->cols, self_loops, fill, dtype);
  Graph out = from_csr(rp, c, w, s_->cols);
  if (memo) {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->normalized.emplace(key, out);
  }
  return out;
}

torch::Tensor spmm(const Graph& g, const torch::Tensor& x, const c10::optional<torch::Tensor>& values,
                   const c10::optional<torch::Tensor>& bias) {
  TESSERA_CHECK(g.defined(), "spmm: empty graph");
  TESSERA_CHECK(x.dim() == 2 && x.size(0) == g.cols(), "spmm: x must be [", g.cols(), ", F] for a graph with ",
                g.cols(), " source nodes, got ", x.sizes());
  c10::optional<torch::Tensor> v = values;
  if (!(v && v->defined()) && g.weighted()) v = g.values();
  // The transpose is needed only for dX; a bias or values gradient alone does not build it.
  const bool needs_dx = torch::GradMode::is_enabled() && x.requires_grad();
  if (!needs_dx) return tessera::pt::spmm(g.rowptr(), g.col(), v, x, {}, {}, {}, int64_t(g.id()), 0, bias);
  const auto& t = g.transpose();
  c10::optional<torch::Tensor> t_values;  // the memo serves the graph's own values only
  if (!(values && values->defined()) && g.weighted()) t_values = g.transposed_values();
  return tessera::pt::spmm(g.rowptr(), g.col(), v, x, t.rowptr, t.col, t.perm, int64_t(g.id()), int64_t(t.id), bias,
                           t_values);
}

}  // namespace tessera::pt
