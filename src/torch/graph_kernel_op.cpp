// Marginalized graph kernel ops for Python (tessera.kernels.MarginalizedGraphKernel).
//
// A batch of G labeled graphs travels as one list of CPU tensors, concatenated over graphs:
//   [graph_ptr (G+1) int64   node offsets of each graph,
//    rowptr    (N+1) int64   global CSR row offsets over all N nodes (edges of graph g are
//                             rowptr[graph_ptr[g]] .. rowptr[graph_ptr[g+1]]),
//    col       (E)   int64   column of each entry, LOCAL to its graph (0 .. n_g-1),
//    weight    (E or 0) float64  edge weights (empty = unweighted),
//    node_label(N or 0) int64,  edge_label (E or 0) int64,
//    node_attr (N x D) float]  (D may be 0)
// Base kernels come as the text parse_base_kernel() reads ("delta:0.5", "product(...)"), so the
// Python side needs no mirror of the C++ classes. The solver runs on `device` ("cpu", "cuda:0");
// results come back as CPU float64 tensors. Pairs that fail to converge are counted in the
// returned stats (and named by the Python wrapper), never silently returned.
// graph_from_smiles returns the same batch for molecules read through RDKit (io/smiles.hpp).
#include <torch/library.h>
#include <ATen/ATen.h>

#include <string>
#include <tuple>
#include <vector>

#include "boundary.hpp"
#include "tessera/core/error.hpp"
#include "tessera/io/smiles.hpp"
#include "tessera/kernels/marginalized.hpp"

namespace tessera::pt {
namespace {

using kernels::MarginalizedGraphKernel;
using kernels::Options;

const at::Tensor& batch_part(const std::vector<at::Tensor>& b, size_t k, const char* name) {
  TESSERA_CHECK(b.size() == 7, "graph_kernel: a graph batch is 7 tensors (graph_ptr, rowptr, col, "
                                   "weight, node_label, edge_label, node_attr), got ", b.size());
  const at::Tensor& t = b[k];
  TESSERA_CHECK(t.device().is_cpu(), "graph_kernel: ", name, " must be a CPU tensor");
  return t;
}

at::Tensor as_cpu(const at::Tensor& t, at::ScalarType s) { return t.to(at::kCPU, s).contiguous(); }

// Unpacks a batch into LabeledGraphs, checking offsets; validate_graph() checks the rest.
std::vector<LabeledGraph> unpack(const std::vector<at::Tensor>& b) {
  const auto gptr = as_cpu(batch_part(b, 0, "graph_ptr"), at::kLong);
  const auto rowptr = as_cpu(batch_part(b, 1, "rowptr"), at::kLong);
  const auto col = as_cpu(batch_part(b, 2, "col"), at::kLong);
  const auto weight = as_cpu(batch_part(b, 3, "weight"), at::kDouble);
  const auto nlab = as_cpu(batch_part(b, 4, "node_label"), at::kLong);
  const auto elab = as_cpu(batch_part(b, 5, "edge_label"), at::kLong);
  auto attr = as_cpu(batch_part(b, 6, "node_attr"), at::kFloat);
  TESSERA_CHECK(gptr.dim() == 1 && gptr.numel() >= 1, "graph_kernel: graph_ptr must be 1-D with G+1 entries");
  const int64_t G = gptr.numel() - 1;
  const int64_t* gp = gptr.data_ptr<int64_t>();
  const int64_t N = gp[G];
  TESSERA_CHECK(gp[0] == 0, "graph_kernel: graph_ptr[0] must be 0, got ", gp[0]);
  TESSERA_CHECK(rowptr.dim() == 1 && rowptr.numel() == N + 1,
                "graph_kernel: rowptr must have N+1 = ", N + 1, " entries, got ", rowptr.numel());
  const int64_t* rp = rowptr.data_ptr<int64_t>();
  const int64_t E = col.numel();
  TESSERA_CHECK(rp[0] == 0 && rp[N] == E, "graph_kernel: rowptr must run from 0 to len(col) = ", E);
  TESSERA_CHECK(weight.numel() == 0 || weight.numel() == E, "graph_kernel: weight must be empty or have ", E, " entries");
  TESSERA_CHECK(nlab.numel() == 0 || nlab.numel() == N, "graph_kernel: node_label must be empty or have ", N, " entries");
  TESSERA_CHECK(elab.numel() == 0 || elab.numel() == E, "graph_kernel: edge_label must be empty or have ", E, " entries");
  if (attr.dim() == 1 && attr.numel() == 0) attr = attr.reshape({N, 0});
  TESSERA_CHECK(attr.dim() == 2 && attr.size(0) == N, "graph_kernel: node_attr must be N x D with N = ", N);
  const int64_t D = attr.size(1);
  const int64_t* cp = col.data_ptr<int64_t>();
  const float* ap = attr.data_ptr<float>();

  std::vector<LabeledGraph> out(static_cast<size_t>(G));
  for (int64_t g = 0; g < G; ++g) {
    const int64_t n0 = gp[g], n1 = gp[g + 1];
    TESSERA_CHECK(n1 >= n0 && n1 <= N, "graph_kernel: graph_ptr must be non-decreasing (graph ", g, ")");
    const int64_t e0 = rp[n0], e1 = rp[n1];
    TESSERA_CHECK(e0 <= e1 && e1 <= E, "graph_kernel: rowptr out of order at graph ", g);
    LabeledGraph& G1 = out[size_t(g)];
    const int64_t n = n1 - n0;
    G1.adj.rows = G1.adj.cols = n;
    G1.adj.rowptr.assign(size_t(n + 1), 0);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t len = rp[n0 + r + 1] - rp[n0 + r];
      TESSERA_CHECK(len >= 0, "graph_kernel: rowptr decreases at node ", r, " of graph ", g);
      G1.adj.rowptr[size_t(r + 1)] = int32_t(rp[n0 + r + 1] - e0);
    }
    G1.adj.col.resize(size_t(e1 - e0));
    for (int64_t k = e0; k < e1; ++k) {
      TESSERA_CHECK(cp[k] >= 0 && cp[k] < n, "graph_kernel: col[", k, "] = ", cp[k], " outside graph ", g
                                                                  , " with ", n, " nodes (columns are local)");
      G1.adj.col[size_t(k - e0)] = int32_t(cp[k]);
    }
    if (weight.numel())
      for (int64_t k = e0; k < e1; ++k) G1.adj.values.push_back(float(weight.data_ptr<double>()[k]));
    if (elab.numel())
      for (int64_t k = e0; k < e1; ++k) G1.edge_labels.push_back(int32_t(elab.data_ptr<int64_t>()[k]));
    if (nlab.numel())
      for (int64_t i = n0; i < n1; ++i) G1.node_labels.push_back(int32_t(nlab.data_ptr<int64_t>()[i]));
    G1.node_attrs = Dense<float>(n, D);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < D; ++c) G1.node_attrs(i, c) = ap[(n0 + i) * D + c];
    kernels::validate_graph(G1, g);
  }
  return out;
}

Device parse_device(const std::string& s) {
  if (s == "cpu") return Device{};
  if (s.rfind("cuda", 0) == 0) {
    int idx = 0;
    if (s.size() > 5 && s[4] == ':') idx = std::stoi(s.substr(5));
    return Device{DeviceKind::cuda, idx};
  }
  ::tessera::fail("graph_kernel: device must be 'cpu' or 'cuda[:i]', got '", s, "'");
}

Options make_options(const std::string& node_kernel, const std::string& edge_kernel, double q, int64_t lmin,
                     bool normalize, const std::string& dtype, const std::string& device, double tol,
                     int64_t max_iter) {
  Options o;
  o.node_kernel = kernels::parse_base_kernel(node_kernel);
  o.edge_kernel = kernels::parse_base_kernel(edge_kernel);
  o.q = q;
  o.lmin = int(lmin);
  o.normalize = normalize;
  o.dtype = parse_dtype(dtype);
  o.device = parse_device(device);
  o.tol = tol;
  o.max_iter = int(max_iter);
  o.validate();
  return o;
}

at::Tensor to_tensor(const Dense<double>& d) {
  auto t = at::empty({d.rows, d.cols}, at::kDouble);
  std::copy(d.data.begin(), d.data.end(), t.data_ptr<double>());
  return t;
}

// Returns (K, dK/dtheta [H x R x C or 0], iterations [R x C], stats [pairs, converged,
// max_iterations, mean_iterations, max_residual, seconds, matvec_flops]).
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> graph_kernel_gram(
    const std::vector<at::Tensor>& x, const std::vector<at::Tensor>& y, const std::string& node_kernel,
    const std::string& edge_kernel, double q, int64_t lmin, bool normalize, const std::string& dtype,
    const std::string& device, double tol, int64_t max_iter, bool gradient) {
  const MarginalizedGraphKernel mgk(make_options(node_kernel, edge_kernel, q, lmin, normalize, dtype, device, tol, max_iter));
  const auto gx = unpack(x);
  const auto r = y.empty() ? mgk.gram(gx, gradient) : mgk.gram(gx, unpack(y), gradient);
  at::Tensor grad = at::empty({int64_t(r.gradient.size()), r.K.rows, r.K.cols}, at::kDouble);
  for (size_t h = 0; h < r.gradient.size(); ++h) grad[int64_t(h)].copy_(to_tensor(r.gradient[h]));
  auto iters = at::empty({r.iterations.rows, r.iterations.cols}, at::kInt);
  std::copy(r.iterations.data.begin(), r.iterations.data.end(), iters.data_ptr<int32_t>());
  const auto& s = r.stats;
  auto stats = at::tensor(std::vector<double>{double(s.pairs), double(s.converged), double(s.max_iterations),
                                              s.mean_iterations, s.max_residual, s.seconds, s.matvec_flops},
                          at::kDouble);
  return {to_tensor(r.K), grad, iters, stats};
}

at::Tensor graph_kernel_diag(const std::vector<at::Tensor>& x, const std::string& node_kernel,
                             const std::string& edge_kernel, double q, int64_t lmin, bool normalize,
                             const std::string& dtype, const std::string& device, double tol, int64_t max_iter) {
  const MarginalizedGraphKernel mgk(make_options(node_kernel, edge_kernel, q, lmin, normalize, dtype, device, tol, max_iter));
  const auto d = mgk.diag(unpack(x));
  return at::tensor(d, at::kDouble);
}

// The batch of the molecules (layout above; unweighted, 4 node attributes). Invalid SMILES and
// builds without RDKit raise tessera::Error naming the input.
std::vector<at::Tensor> graph_from_smiles(const std::vector<std::string>& smiles) {
  TESSERA_CHECK(!smiles.empty(), "graph_from_smiles: empty list of SMILES");
  const GraphCollection c = io::read_smiles(smiles);
  int64_t N = 0, E = 0;
  for (const auto& g : c.graphs) {
    N += g.num_nodes();
    E += g.adj.nnz();
  }
  const int64_t D = c.graphs[0].node_attrs.cols;
  auto gptr = at::empty({int64_t(c.graphs.size()) + 1}, at::kLong), rowptr = at::empty({N + 1}, at::kLong);
  auto col = at::empty({E}, at::kLong), nlab = at::empty({N}, at::kLong), elab = at::empty({E}, at::kLong);
  auto attr = at::empty({N, D}, at::kFloat);
  int64_t *gp = gptr.data_ptr<int64_t>(), *rp = rowptr.data_ptr<int64_t>(), *cp = col.data_ptr<int64_t>();
  int64_t *np = nlab.data_ptr<int64_t>(), *ep = elab.data_ptr<int64_t>();
  float* ap = attr.data_ptr<float>();
  int64_t n0 = 0, e0 = 0;
  gp[0] = rp[0] = 0;
  for (size_t g = 0; g < c.graphs.size(); ++g) {
    const LabeledGraph& G = c.graphs[g];
    for (int64_t i = 0; i < G.num_nodes(); ++i) {
      rp[n0 + i + 1] = e0 + G.adj.rowptr[size_t(i) + 1];
      np[n0 + i] = G.node_labels[size_t(i)];
      for (int64_t k = 0; k < D; ++k) ap[(n0 + i) * D + k] = G.node_attrs(i, k);
    }
    for (int64_t k = 0; k < G.adj.nnz(); ++k) {
      cp[e0 + k] = G.adj.col[size_t(k)];
      ep[e0 + k] = G.edge_labels[size_t(k)];
    }
    n0 += G.num_nodes();
    e0 += G.adj.nnz();
    gp[g + 1] = n0;
  }
  return {gptr, rowptr, col, at::empty({0}, at::kDouble), nlab, elab, attr};
}

std::vector<std::string> graph_kernel_hyperparameter_names(const std::string& node_kernel, const std::string& edge_kernel) {
  Options o;
  o.node_kernel = kernels::parse_base_kernel(node_kernel);
  o.edge_kernel = kernels::parse_base_kernel(edge_kernel);
  return MarginalizedGraphKernel(o).hyperparameter_names();
}

}  // namespace
}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("graph_kernel_gram(Tensor[] x, Tensor[] y, str node_kernel, str edge_kernel, float q, int lmin, "
        "bool normalize, str dtype, str device, float tol, int max_iter, bool gradient) "
        "-> (Tensor, Tensor, Tensor, Tensor)", TESSERA_OP(tessera::pt::graph_kernel_gram));
  m.def("graph_kernel_diag(Tensor[] x, str node_kernel, str edge_kernel, float q, int lmin, bool normalize, "
        "str dtype, str device, float tol, int max_iter) -> Tensor", TESSERA_OP(tessera::pt::graph_kernel_diag));
  m.def("graph_kernel_hyperparameter_names(str node_kernel, str edge_kernel) -> str[]", TESSERA_OP(tessera::pt::graph_kernel_hyperparameter_names));
  m.def("graph_from_smiles(str[] smiles) -> Tensor[]", TESSERA_OP(tessera::pt::graph_from_smiles));
}
