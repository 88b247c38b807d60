// Marginalized graph kernel: option and input checks, graph preparation (reorder, octiles),
// the pair API and the Gram-matrix driver (backend-independent).
#include "tessera/kernels/marginalized.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "kernels/batch.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kernels {

void Options::validate() const {
  TESSERA_CHECK(q > 0 && q < 1, "graph kernel: stopping probability q = ", q, " must lie in (0, 1)");
  TESSERA_CHECK(std::isfinite(start) && start > 0, "graph kernel: start weight ", start, " must be > 0");
  TESSERA_CHECK(tol >= 0 && std::isfinite(tol), "graph kernel: tolerance ", tol, " must be >= 0");
  TESSERA_CHECK(max_iter >= 1, "graph kernel: max_iter ", max_iter, " must be >= 1");
  TESSERA_CHECK(dtype == DType::f32 || dtype == DType::f64, "graph kernel: dtype ", dtype_name(dtype),
                " not supported (float32 or float64)");
  TESSERA_CHECK(lmin == 0 || lmin == 1, "graph kernel: lmin ", lmin, " must be 0 or 1");
  TESSERA_CHECK(!device.is_cuda() || cuda_available(), "graph kernel: device ", device.str(),
                " requested but no CUDA device is available");
  node_kernel.validate("node kernel", true);
  edge_kernel.validate("edge kernel", false);
}

void validate_graph(const LabeledGraph& g, int64_t index) {
  const auto& a = g.adj;
  const int64_t n = a.rows;
  TESSERA_CHECK(a.rows == a.cols, "graph ", index, ": adjacency is ", a.rows, " x ", a.cols, ", not square");
  TESSERA_CHECK(int64_t(a.rowptr.size()) == n + 1 && a.rowptr[0] == 0 && a.rowptr.back() == int32_t(a.nnz()),
                "graph ", index, ": malformed row offsets");
  TESSERA_CHECK(a.values.empty() || a.values.size() == a.col.size(), "graph ", index, ": ", a.values.size(),
                " weights for ", a.col.size(), " entries");
  TESSERA_CHECK(g.node_labels.empty() || int64_t(g.node_labels.size()) == n, "graph ", index, ": ",
                g.node_labels.size(), " node labels for ", n, " nodes");
  TESSERA_CHECK(g.edge_labels.empty() || g.edge_labels.size() == a.col.size(), "graph ", index, ": ",
                g.edge_labels.size(), " edge labels for ", a.col.size(), " adjacency entries");
  TESSERA_CHECK(g.node_attrs.cols == 0 || g.node_attrs.rows == n, "graph ", index, ": ", g.node_attrs.rows,
                " attribute rows for ", n, " nodes");
  // Symmetry with equal weights and labels: the kernel is defined on undirected graphs.
  for (int64_t r = 0; r < n; ++r) {
    TESSERA_CHECK(a.rowptr[size_t(r + 1)] >= a.rowptr[size_t(r)], "graph ", index, ": non-monotone offsets at row ", r);
    for (int32_t k = a.rowptr[size_t(r)]; k < a.rowptr[size_t(r + 1)]; ++k) {
      const int32_t c = a.col[size_t(k)];
      TESSERA_CHECK(c >= 0 && c < n, "graph ", index, ": entry ", k, " of row ", r, " has column ", c,
                    " outside [0, ", n, ")");
      TESSERA_CHECK(k == a.rowptr[size_t(r)] || c > a.col[size_t(k - 1)], "graph ", index, ": row ", r,
                    " has unsorted or duplicate columns at entry ", k);
      const float w = a.values.empty() ? 1.0f : a.values[size_t(k)];
      TESSERA_CHECK(std::isfinite(w) && w > 0, "graph ", index, ": edge (", r, ", ", c, ") has weight ", w,
                    " (weights must be finite and > 0)");
      const auto* b = a.col.data() + a.rowptr[size_t(c)];
      const auto* e = a.col.data() + a.rowptr[size_t(c + 1)];
      const auto* it = std::lower_bound(b, e, int32_t(r));
      TESSERA_CHECK(it != e && *it == r, "graph ", index, ": edge (", r, ", ", c,
                    ") has no reverse edge (the adjacency must be symmetric)");
      const size_t rk = size_t(it - a.col.data());
      TESSERA_CHECK(a.values.empty() || a.values[rk] == w, "graph ", index, ": edge (", r, ", ", c,
                    ") has weight ", w, " but its reverse has ", a.values[rk]);
      TESSERA_CHECK(g.edge_labels.empty() || g.edge_labels[rk] == g.edge_labels[size_t(k)], "graph ", index,
                    ": edge (", r, ", ", c, ") and its reverse carry different labels");
    }
  }
}

uint16_t EdgeTable::id(int32_t label) const {
  const auto it = std::lower_bound(labels.begin(), labels.end(), label);
  TESSERA_CHECK(it != labels.end() && *it == label, "graph kernel: edge label ", label, " is not in the edge table");
  return uint16_t(it - labels.begin());
}

MarginalizedGraphKernel::MarginalizedGraphKernel(Options options) : opt_(std::move(options)) { opt_.validate(); }

std::vector<std::string> MarginalizedGraphKernel::hyperparameter_names() const {
  auto names = opt_.node_kernel.hyper_names("node");
  for (auto& s : opt_.edge_kernel.hyper_names("edge")) names.push_back(s);
  names.push_back("q");
  return names;
}
int MarginalizedGraphKernel::num_hyperparameters() const {
  return opt_.node_kernel.num_terms() + opt_.edge_kernel.num_terms() + 1;
}

EdgeTable MarginalizedGraphKernel::edge_table(const std::vector<const LabeledGraph*>& graphs) const {
  std::set<int32_t> distinct;
  for (const auto* g : graphs) {
    if (g->edge_labels.empty() && g->adj.nnz() > 0) distinct.insert(0);
    distinct.insert(g->edge_labels.begin(), g->edge_labels.end());
  }
  if (distinct.empty()) distinct.insert(0);
  TESSERA_CHECK(distinct.size() <= 1024, "graph kernel: ", distinct.size(),
                " distinct edge labels; at most 1024 are supported (the edge kernel is tabulated)");
  EdgeTable t;
  t.labels.assign(distinct.begin(), distinct.end());
  const int L = t.size(), H = opt_.edge_kernel.num_terms();
  const BaseKernelView ev = opt_.edge_kernel.view();
  t.value.resize(size_t(L * L));
  t.grad.resize(size_t(H * L * L));
  for (int a = 0; a < L; ++a)
    for (int b = 0; b < L; ++b) {
      t.value[size_t(a * L + b)] = ev.eval(t.labels[size_t(a)], nullptr, t.labels[size_t(b)], nullptr, 0);
      for (int h = 0; h < H; ++h)
        t.grad[size_t((h * L + a) * L + b)] = ev.grad(h, t.labels[size_t(a)], nullptr, t.labels[size_t(b)], nullptr, 0);
    }
  return t;
}

PreparedGraph MarginalizedGraphKernel::prepare(const LabeledGraph& g, const EdgeTable& table) const {
  PreparedGraph p;
  p.n = g.num_nodes();
  p.perm = reorder::compute_order(g.adj.view(), p.n > kOctile ? opt_.reorder : reorder::Method::none);
  std::vector<int64_t> entry_map;
  const Csr<int32_t> adj = p.perm.apply(g.adj.view(), &entry_map);
  std::vector<uint16_t> ids(size_t(adj.nnz()), 0);
  for (int64_t k = 0; k < adj.nnz(); ++k)
    ids[size_t(k)] = table.id(g.edge_labels.empty() ? 0 : g.edge_labels[size_t(entry_map[size_t(k)])]);
  p.tiles = build_octiles(adj.view(), adj.weighted() ? adj.values.data() : nullptr, ids.data());
  p.degree.assign(size_t(p.n), 0.0);
  for (int64_t r = 0; r < p.n; ++r) {
    double d = 0;
    for (int32_t k = adj.rowptr[size_t(r)]; k < adj.rowptr[size_t(r + 1)]; ++k)
      d += adj.weighted() ? double(adj.values[size_t(k)]) : 1.0;
    p.degree[size_t(r)] = d > 0 ? d : 1.0;  // isolated nodes: d = 1 (GraphDot convention)
  }
  p.node_label = g.node_labels.empty() ? std::vector<int32_t>(size_t(p.n), 0) : p.perm.gather(g.node_labels);
  p.attr_dim = int(g.node_attrs.cols);
  if (p.attr_dim > 0) p.node_attr = p.perm.gather(g.node_attrs.data, p.attr_dim);
  if (opt_.node_kernel.uses(Feature::attributes))
    TESSERA_CHECK(p.attr_dim > 0 || p.n == 0, "graph kernel: the node kernel uses attributes but a graph has none");
  return p;
}

PairResult MarginalizedGraphKernel::pair(const LabeledGraph& g1, const LabeledGraph& g2, const PairRequest& req) const {
  validate_graph(g1, 0);
  validate_graph(g2, 1);
  TESSERA_CHECK(!opt_.device.is_cuda(), "graph kernel: pair() runs on the CPU; use gram() for CUDA batches");
  const EdgeTable table = edge_table({&g1, &g2});
  const PreparedGraph a = prepare(g1, table), b = prepare(g2, table);
  auto start_of = [&](const std::vector<double>* p, const PreparedGraph& g, const char* which) {
    if (!p) return std::vector<double>(size_t(g.n), opt_.start);
    TESSERA_CHECK(int64_t(p->size()) == g.n, "graph kernel: ", which, " has ", p->size(), " start weights for ",
                  g.n, " nodes");
    for (double v : *p) TESSERA_CHECK(std::isfinite(v) && v >= 0, "graph kernel: ", which, " start weight ", v);
    return g.perm.gather(*p);
  };
  const auto p1 = start_of(req.p1, a, "p1"), p2 = start_of(req.p2, b, "p2");
  const bool big = a.n * b.n >= 4096;
  auto o = detail::solve_pair_cpu(a, b, table, opt_, p1, p2, req.nodal, req.gradient, big);
  PairResult r;
  r.value = o.out.value;
  r.stats = o.out.stats;
  r.adjoint = o.adjoint;
  r.gradient = std::move(o.out.gradient);
  r.matvec_flops = o.out.flops;
  TESSERA_CHECK(r.stats.converged, "graph kernel: PCG did not converge in ", r.stats.iterations,
                " iterations (relative residual ", r.stats.residual, " > tolerance ", opt_.tolerance(),
                "); raise max_iter or the tolerance");
  TESSERA_CHECK(!req.gradient || r.adjoint.converged, "graph kernel: adjoint PCG did not converge (residual ",
                r.adjoint.residual, ")");
  if (req.nodal) {
    r.nodal = Dense<double>(a.n, b.n);
    for (int64_t i = 0; i < a.n; ++i)
      for (int64_t j = 0; j < b.n; ++j)
        r.nodal(i, j) = o.nodal[size_t(a.perm.new_of_old(i) * b.n + b.perm.new_of_old(j))];
  }
  if (req.gradient) {
    r.grad_p1 = a.perm.scatter(o.grad_p1);
    r.grad_p2 = b.perm.scatter(o.grad_p2);
  }
  return r;
}

namespace {
// Solves the listed jobs on the configured backend and fills K / gradients / stats.
std::vector<detail::JobOutput> run_jobs(const detail::BatchInput& in, const std::vector<detail::PairJob>& jobs,
                                        GramStats& stats) {
  std::vector<detail::JobOutput> out;
  const auto t0 = std::chrono::steady_clock::now();
#ifdef TESSERA_WITH_CUDA
  if (in.options->device.is_cuda())
    detail::solve_batch_cuda(in, jobs, out);
  else
#endif
    detail::solve_batch_cpu(in, jobs, out);
  stats.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double iters = 0;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const auto& o = out[k];
    ++stats.pairs;
    iters += o.stats.iterations;
    stats.max_iterations = std::max(stats.max_iterations, o.stats.iterations);
    stats.max_residual = std::max(stats.max_residual, o.stats.residual);
    stats.matvec_flops += o.flops;
    stats.matvec_flops_executed += o.exec_flops;
    stats.matvec_kernel_seconds += o.matvec_seconds;
    stats.matvec_kernel_flops_executed += o.matvec_kernel_flops;
    if (o.stats.converged) ++stats.converged;
    else stats.failed.push_back({jobs[k].a, jobs[k].b, o.stats});
  }
  stats.mean_iterations = stats.pairs ? (stats.mean_iterations * double(stats.pairs - int64_t(jobs.size())) + iters) /
                                            double(stats.pairs)
                                      : 0;
  return out;
}
}  // namespace

GramResult MarginalizedGraphKernel::gram(const std::vector<LabeledGraph>& graphs, bool gradient) const {
  const int64_t N = int64_t(graphs.size());
  std::vector<const LabeledGraph*> ptrs;
  for (int64_t i = 0; i < N; ++i) {
    validate_graph(graphs[size_t(i)], i);
    ptrs.push_back(&graphs[size_t(i)]);
  }
  const EdgeTable table = edge_table(ptrs);
  std::vector<PreparedGraph> prepared(static_cast<size_t>(N));
#pragma omp parallel for schedule(dynamic)
  for (int64_t i = 0; i < N; ++i) prepared[size_t(i)] = prepare(graphs[size_t(i)], table);
  for (int64_t i = 1; i < N; ++i)
    TESSERA_CHECK(prepared[size_t(i)].attr_dim == prepared[0].attr_dim, "graph kernel: graph ", i, " has ",
                  prepared[size_t(i)].attr_dim, " node attributes, graph 0 has ", prepared[0].attr_dim);
  std::vector<detail::PairJob> jobs;
  for (int32_t i = 0; i < N; ++i)
    for (int32_t j = i; j < N; ++j) jobs.push_back({i, j});
  // Larger pairs first: better load balance for the dynamic schedule / work queue.
  std::stable_sort(jobs.begin(), jobs.end(), [&](const auto& x, const auto& y) {
    return prepared[size_t(x.a)].n * prepared[size_t(x.b)].n > prepared[size_t(y.a)].n * prepared[size_t(y.b)].n;
  });
  GramResult res;
  const detail::BatchInput in{&prepared, &prepared, &table, &opt_, gradient};
  const auto out = run_jobs(in, jobs, res.stats);
  const int H = num_hyperparameters();
  res.K = Dense<double>(N, N);
  res.iterations = Dense<int32_t>(N, N);
  if (gradient) res.gradient.assign(static_cast<size_t>(H), Dense<double>(N, N));
  for (size_t k = 0; k < jobs.size(); ++k) {
    const auto [i, j] = jobs[k];
    res.K(i, j) = res.K(j, i) = out[k].value;
    res.iterations(i, j) = res.iterations(j, i) = out[k].stats.iterations;
    if (gradient)
      for (int h = 0; h < H; ++h) res.gradient[size_t(h)](i, j) = res.gradient[size_t(h)](j, i) = out[k].gradient[size_t(h)];
  }
  if (opt_.normalize) {
    std::vector<double> d(static_cast<size_t>(N));
    for (int64_t i = 0; i < N; ++i) d[size_t(i)] = res.K(i, i);
    if (gradient) {
      std::vector<std::vector<double>> dd(static_cast<size_t>(H), std::vector<double>(static_cast<size_t>(N)));
      for (int h = 0; h < H; ++h)
        for (int64_t i = 0; i < N; ++i) dd[size_t(h)][size_t(i)] = res.gradient[size_t(h)](i, i);
      for (int h = 0; h < H; ++h)
        for (int64_t i = 0; i < N; ++i)
          for (int64_t j = 0; j < N; ++j) {
            const double kn = res.K(i, j) / std::sqrt(d[size_t(i)] * d[size_t(j)]);
            res.gradient[size_t(h)](i, j) =
                kn * (res.gradient[size_t(h)](i, j) / res.K(i, j) -
                      0.5 * (dd[size_t(h)][size_t(i)] / d[size_t(i)] + dd[size_t(h)][size_t(j)] / d[size_t(j)]));
          }
    }
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < N; ++j) res.K(i, j) /= std::sqrt(d[size_t(i)] * d[size_t(j)]);
  }
  return res;
}

GramResult MarginalizedGraphKernel::gram(const std::vector<LabeledGraph>& rows, const std::vector<LabeledGraph>& cols,
                                         bool gradient) const {
  const int64_t R = int64_t(rows.size()), C = int64_t(cols.size());
  std::vector<const LabeledGraph*> ptrs;
  for (int64_t i = 0; i < R; ++i) validate_graph(rows[size_t(i)], i), ptrs.push_back(&rows[size_t(i)]);
  for (int64_t i = 0; i < C; ++i) validate_graph(cols[size_t(i)], R + i), ptrs.push_back(&cols[size_t(i)]);
  const EdgeTable table = edge_table(ptrs);
  std::vector<PreparedGraph> pr(static_cast<size_t>(R)), pc(static_cast<size_t>(C));
#pragma omp parallel for schedule(dynamic)
  for (int64_t i = 0; i < R + C; ++i) {
    if (i < R) pr[size_t(i)] = prepare(rows[size_t(i)], table);
    else pc[size_t(i - R)] = prepare(cols[size_t(i - R)], table);
  }
  GramResult res;
  const int H = num_hyperparameters();
  std::vector<detail::PairJob> jobs;
  for (int32_t i = 0; i < R; ++i)
    for (int32_t j = 0; j < C; ++j) jobs.push_back({i, j});
  const auto out = run_jobs({&pr, &pc, &table, &opt_, gradient}, jobs, res.stats);
  res.K = Dense<double>(R, C);
  res.iterations = Dense<int32_t>(R, C);
  if (gradient) res.gradient.assign(static_cast<size_t>(H), Dense<double>(R, C));
  for (size_t k = 0; k < jobs.size(); ++k) {
    res.K(jobs[k].a, jobs[k].b) = out[k].value;
    res.iterations(jobs[k].a, jobs[k].b) = out[k].stats.iterations;
    if (gradient)
      for (int h = 0; h < H; ++h) res.gradient[size_t(h)](jobs[k].a, jobs[k].b) = out[k].gradient[size_t(h)];
  }
  if (opt_.normalize) {
    // Self-similarities of both sides (and their gradients).
    std::vector<detail::PairJob> sj;
    for (int32_t i = 0; i < R; ++i) sj.push_back({i, i});
    GramStats ignore;
    const auto dr = run_jobs({&pr, &pr, &table, &opt_, gradient}, sj, ignore);
    sj.clear();
    for (int32_t j = 0; j < C; ++j) sj.push_back({j, j});
    const auto dc = run_jobs({&pc, &pc, &table, &opt_, gradient}, sj, ignore);
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j) {
        const double di = dr[size_t(i)].value, dj = dc[size_t(j)].value, kij = res.K(i, j);
        const double kn = kij / std::sqrt(di * dj);
        if (gradient)
          for (int h = 0; h < H; ++h)
            res.gradient[size_t(h)](i, j) = kn * (res.gradient[size_t(h)](i, j) / kij -
                                                  0.5 * (dr[size_t(i)].gradient[size_t(h)] / di +
                                                         dc[size_t(j)].gradient[size_t(h)] / dj));
        res.K(i, j) = kn;
      }
  }
  return res;
}

std::vector<double> MarginalizedGraphKernel::diag(const std::vector<LabeledGraph>& graphs) const {
  std::vector<const LabeledGraph*> ptrs;
  for (size_t i = 0; i < graphs.size(); ++i) validate_graph(graphs[i], int64_t(i)), ptrs.push_back(&graphs[i]);
  const EdgeTable table = edge_table(ptrs);
  std::vector<PreparedGraph> p(graphs.size());
  for (size_t i = 0; i < graphs.size(); ++i) p[i] = prepare(graphs[i], table);
  std::vector<detail::PairJob> jobs;
  for (int32_t i = 0; i < int32_t(graphs.size()); ++i) jobs.push_back({i, i});
  GramStats st;
  const auto out = run_jobs({&p, &p, &table, &opt_, false}, jobs, st);
  std::vector<double> d(graphs.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = opt_.normalize ? 1.0 : out[i].value;
  return d;
}

}  // namespace tessera::kernels
