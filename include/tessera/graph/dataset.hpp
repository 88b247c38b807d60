#pragma once
// Data sets that carry more than a graph: node classification (features, labels, split),
// collections of labeled graphs (TU format), and temporal data (timestamped edges, node signals).
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/dense.hpp"
#include "tessera/graph/csr.hpp"

namespace tessera {

struct NodeDataset {
  std::string name;
  Csr<int64_t> graph;             // in-neighbour CSR, nodes x nodes
  Dense<float> features;          // nodes x num_features (zeros where a source has none)
  std::vector<int32_t> labels;    // one class per node, -1 = unlabeled
  int num_classes = 0;
  std::vector<int64_t> train, val, test;
};

struct LabeledGraph {
  Csr<int32_t> adj;               // symmetric adjacency, values = edge weights (may be empty)
  std::vector<int32_t> node_labels;  // per node (empty if the collection has none)
  std::vector<int32_t> edge_labels;  // per CSR entry, aligned with adj.col (empty if none)
  Dense<float> node_attrs;        // nodes x attr_dim (0 columns if none)
  int32_t graph_label = 0;
  int64_t num_nodes() const { return adj.rows; }
};

struct GraphCollection {
  std::string name;
  std::vector<LabeledGraph> graphs;
};

// `t src dst [weight]` rows: one event or one snapshot edge each.
struct TemporalEdges {
  int64_t num_nodes = 0;
  std::vector<int64_t> t, src, dst;
  std::vector<float> w;           // empty = unweighted
  int64_t size() const { return int64_t(t.size()); }
};

// Per-step node values: steps x nodes (one line per step in the files).
struct NodeSignal {
  Dense<float> values;
  int64_t steps() const { return values.rows; }
  int64_t nodes() const { return values.cols; }
};

}  // namespace tessera
