// The planted-partition node-classification task: the embedded default data set "sbm".
// Classes are balanced; a node's edges stay inside its class with probability p_in_share and go
// to a uniform node of another class otherwise. Features are the class mean plus unit Gaussian
// noise, with class means drawn as N(0, signal^2 / features) per coordinate: two class means are
// about signal * sqrt(2) apart, so with the defaults features alone classify well above chance but
// far from perfectly, and averaging over neighbours (what a GCN layer does) helps a lot.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "rng.hpp"
#include "tessera/core/error.hpp"
#include "tessera/gen/generators.hpp"

namespace tessera::gen {
namespace {
using detail::Stream;

void check(const SbmOptions& o) {
  TESSERA_CHECK(o.classes >= 2, "sbm: classes must be at least 2, got ", o.classes);
  TESSERA_CHECK(o.nodes >= 2 * int64_t(o.classes), "sbm: nodes (", o.nodes, ") must be at least 2 x classes (",
                o.classes, ")");
  TESSERA_CHECK(o.avg_degree >= 0 && o.avg_degree <= double(o.nodes) / o.classes - 1,
                "sbm: degree ", o.avg_degree, " must be in [0, nodes / classes - 1]");
  TESSERA_CHECK(o.p_in_share >= 0 && o.p_in_share <= 1, "sbm: p_in ", o.p_in_share, " must be in [0, 1]");
  TESSERA_CHECK(o.features >= 1, "sbm: features must be at least 1, got ", o.features);
  TESSERA_CHECK(std::isfinite(o.feature_signal) && o.feature_signal >= 0, "sbm: signal ", o.feature_signal,
                " must be finite and non-negative");
  TESSERA_CHECK(o.train > 0 && o.val >= 0 && o.train + o.val < 1, "sbm: split shares train=", o.train,
                " val=", o.val, " must be positive and leave a test share");
  TESSERA_CHECK(double(o.nodes) * o.features <= 4e9, "sbm: nodes x features = ",
                double(o.nodes) * o.features, " is too large for a feature matrix");
}

}  // namespace

NodeDataset sbm_task(const SbmOptions& o) {
  check(o);
  const int64_t n = o.nodes;
  const int C = o.classes;
  NodeDataset ds;
  ds.name = "sbm";
  ds.num_classes = C;

  // Random order of the nodes (sort by a per-node hash): classes are dealt round-robin along it,
  // and each class's prefix in it forms that class's training set (stratified split).
  const Stream order_stream(o.seed, detail::kClasses);
  std::vector<std::pair<uint64_t, int64_t>> order(static_cast<size_t>(n));
#pragma omp parallel for schedule(static) if (detail::parallel_worth(n))
  for (int64_t i = 0; i < n; ++i) order[size_t(i)] = {order_stream.bits(uint64_t(i)), i};
  std::sort(order.begin(), order.end());
  ds.labels.resize(size_t(n));
  std::vector<std::vector<int64_t>> members(static_cast<size_t>(C));  // in random order
  for (int64_t r = 0; r < n; ++r) {
    const int c = int(r % C);
    ds.labels[size_t(order[size_t(r)].second)] = c;
    members[size_t(c)].push_back(order[size_t(r)].second);
  }
  order = {};

  // Split, per class: first train share, then val share, rest test.
  for (int c = 0; c < C; ++c) {
    const auto& mem = members[size_t(c)];
    const int64_t size = int64_t(mem.size());
    const int64_t tr = std::clamp<int64_t>(std::llround(o.train * double(size)), 1, size - 1);
    const int64_t va = std::min(size - tr - 1, int64_t(std::llround(o.val * double(size))));
    ds.train.insert(ds.train.end(), mem.begin(), mem.begin() + tr);
    ds.val.insert(ds.val.end(), mem.begin() + tr, mem.begin() + tr + std::max<int64_t>(0, va));
    ds.test.insert(ds.test.end(), mem.begin() + tr + std::max<int64_t>(0, va), mem.end());
  }
  for (auto* v : {&ds.train, &ds.val, &ds.test}) std::sort(v->begin(), v->end());

  // Position of each node inside its class list, to draw "another member of my class" uniformly.
  std::vector<int64_t> pos(static_cast<size_t>(n));
  for (int c = 0; c < C; ++c)
    for (size_t p = 0; p < members[size_t(c)].size(); ++p) pos[size_t(members[size_t(c)][p])] = int64_t(p);

  // Edges, each an independent function of its index.
  const int64_t m = std::llround(double(n) * o.avg_degree / 2);
  Coo<int64_t> coo;
  coo.rows = coo.cols = n;
  coo.src.resize(size_t(2 * m));
  coo.dst.resize(size_t(2 * m));
  const Stream es(o.seed, detail::kEdges);
  constexpr uint64_t kDraws = 64;  // counters per edge (rejection sampling for "other class")
#pragma omp parallel for schedule(static) if (detail::parallel_worth(m))
  for (int64_t j = 0; j < m; ++j) {
    const uint64_t base = uint64_t(j) * kDraws;
    const int64_t u = es.below(base, n);
    const int cu = ds.labels[size_t(u)];
    int64_t v;
    if (es.uniform(base + 1) < o.p_in_share) {
      const auto& mem = members[size_t(cu)];
      int64_t p = es.below(base + 2, int64_t(mem.size()) - 1);
      if (p >= pos[size_t(u)]) ++p;
      v = mem[size_t(p)];
    } else {
      v = u;
      for (uint64_t t = 2; t < kDraws; ++t) {  // P(all fail) <= 2^-62 with C >= 2 balanced classes
        v = es.below(base + t, n);
        if (ds.labels[size_t(v)] != cu) break;
      }
      if (v == u) v = members[size_t((cu + 1) % C)][0];
    }
    coo.src[size_t(j)] = u;
    coo.dst[size_t(j)] = v;
    coo.src[size_t(m + j)] = v;
    coo.dst[size_t(m + j)] = u;
  }
  ds.graph = build_csr(coo);

  // Features: class mean + unit noise.
  const int F = o.features;
  const Stream means_stream(o.seed, detail::kMeans), noise_stream(o.seed, detail::kFeatures);
  const double scale = o.feature_signal / std::sqrt(double(F));
  std::vector<double> mean(size_t(C) * size_t(F));
  for (size_t i = 0; i < mean.size(); ++i) mean[i] = scale * means_stream.normal(i);
  ds.features = Dense<float>(n, F);
#pragma omp parallel for schedule(static) if (detail::parallel_worth(n))
  for (int64_t i = 0; i < n; ++i) {
    const double* mu = mean.data() + size_t(ds.labels[size_t(i)]) * size_t(F);
    float* x = ds.features.row(i);
    for (int f = 0; f < F; ++f) x[f] = float(mu[f] + noise_stream.normal(uint64_t(i) * uint64_t(F) + uint64_t(f)));
  }
  return ds;
}

}  // namespace tessera::gen
