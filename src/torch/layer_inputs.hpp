#pragma once
// Checks of a C++ layer's node features that name the layer and what it expected (the Python
// layers' tessera/nn/_inputs.py). Without them a wrong x fails inside a projection with libtorch's
// "mat1 and mat2 shapes cannot be multiplied (5x7 and 4x6)", and a wrong type or device with
// "mat1 and mat2 must have the same dtype". weight: one of the layer's parameters (their type and
// device).
#include <torch/torch.h>

#include <string>

#include "autocast.hpp"
#include "tessera/core/error.hpp"
#include "tessera/torch/graph.hpp"

namespace tessera::pt {

// x (named what) floating, on weight's device, and of its type unless autocast is on.
inline void check_node_type(const char* layer, const char* what, const torch::Tensor& x, const torch::Tensor& weight) {
  TESSERA_CHECK(x.is_floating_point(), layer, ": ", what, " must be a floating-point tensor, got ", x.scalar_type());
  TESSERA_CHECK(x.device() == weight.device(), layer, ": ", what, " is on ", x.device(),
                " but the layer's parameters are on ", weight.device());
  TESSERA_CHECK(x.scalar_type() == weight.scalar_type() || autocast_on(x), layer, ": ", what, " is ",
                x.scalar_type(), " but the layer's parameters are ", weight.scalar_type());
}

// x: a defined [nodes, in_channels] tensor of the layer's type, on its device.
inline void check_node_features(const char* layer, const torch::Tensor& x, int64_t in_channels,
                                const torch::Tensor& weight) {
  TESSERA_CHECK(x.defined() && x.dim() == 2, layer, ": x must be a 2-D [nodes, features] tensor, got shape ",
                x.defined() ? x.sizes() : c10::IntArrayRef{});
  TESSERA_CHECK(x.size(1) == in_channels, layer, ": x has ", x.size(1),
                " features per node, but the layer was built for in_channels = ", in_channels);
  check_node_type(layer, "x", x, weight);
}

// ... and one row per node of g (its rows and its columns).
inline void check_node_features(const char* layer, const torch::Tensor& x, int64_t in_channels, const Graph& g,
                                const torch::Tensor& weight) {
  check_node_features(layer, x, in_channels, weight);
  TESSERA_CHECK(g.rows() == x.size(0) && g.cols() == x.size(0), layer, ": graph is ", g.rows(), " x ", g.cols(),
                " but x has ", x.size(0), " nodes");
}

// The targets' width of a layer with PyG's bipartite in_channels = (in_channels, in_channels_dst):
// in_channels_dst, or in_channels for -1; anything else is refused.
inline int64_t targets_width(const char* layer, int64_t in_channels, int64_t in_channels_dst) {
  TESSERA_CHECK(in_channels_dst == -1 || in_channels_dst > 0, layer,
                ": in_channels_dst must be positive, or -1 for in_channels, got ", in_channels_dst);
  return in_channels_dst > 0 ? in_channels_dst : in_channels;
}

// A bipartite layer's sources: x_src a [g.cols(), in_channels] tensor.
inline void check_source_features(const char* layer, const torch::Tensor& x_src, int64_t in_channels, const Graph& g,
                                  const torch::Tensor& weight) {
  check_node_features(layer, x_src, in_channels, weight);
  TESSERA_CHECK(g.cols() == x_src.size(0), layer, ": graph has ", g.cols(), " source nodes (columns) but x_src has ",
                x_src.size(0), " rows");
}

// ... and its targets: x_dst a defined [g.rows(), in_channels_dst] tensor.
inline void check_target_features(const char* layer, const torch::Tensor& x_dst, int64_t in_channels_dst,
                                  const Graph& g, const torch::Tensor& weight) {
  TESSERA_CHECK(x_dst.defined() && x_dst.dim() == 2 && x_dst.size(1) == in_channels_dst, layer,
                ": x_dst must be [targets, ", in_channels_dst, "] (in_channels_dst), got shape ",
                x_dst.defined() ? x_dst.sizes() : c10::IntArrayRef{});
  TESSERA_CHECK(g.rows() == x_dst.size(0), layer, ": graph has ", g.rows(), " target nodes (rows) but x_dst has ",
                x_dst.size(0), " rows");
  check_node_type(layer, "x_dst", x_dst, weight);
}

// A homogeneous call (one x for sources and targets): x [g's nodes, in_channels], and a layer not
// built for bipartite input (in_channels_dst != in_channels).
inline void check_homogeneous(const char* layer, const torch::Tensor& x, int64_t in_channels, int64_t in_channels_dst,
                              const Graph& g, const torch::Tensor& weight) {
  check_node_features(layer, x, in_channels, g, weight);
  TESSERA_CHECK(in_channels == in_channels_dst, layer, ": built for bipartite input (in_channels = ", in_channels,
                ", in_channels_dst = ", in_channels_dst, "): pass x_src and x_dst");
}

// A bipartite call: x_src [g.cols(), in_channels], x_dst [g.rows(), in_channels_dst].
inline void check_bipartite(const char* layer, const torch::Tensor& x_src, int64_t in_channels,
                            const torch::Tensor& x_dst, int64_t in_channels_dst, const Graph& g,
                            const torch::Tensor& weight) {
  check_source_features(layer, x_src, in_channels, g, weight);
  check_target_features(layer, x_dst, in_channels_dst, g, weight);
}

// PyG's call conv(x, edge_index[, edge_attr]) through a layer's graph overload forward(x, graph,
// edge_attr): the graph built for this call, edge_attr's rows (in edge_index's order) reordered to
// its entries.
template <class Layer>
torch::Tensor forward_edge_index(Layer& layer, const torch::Tensor& x, const torch::Tensor& edge_index,
                                 const torch::Tensor& edge_attr) {
  if (!edge_attr.defined()) return layer.forward(x, Graph::from_edge_index(edge_index, {}, x.size(0)));
  const auto [g, ea] = graph_and_edge_attr(edge_index, edge_attr, x.size(0));
  return layer.forward(x, g, ea);
}

// A layer's in_channels as PyG prints it: "6", or "(6, 3)" for bipartite widths.
inline std::string in_channels_text(int64_t in_channels, int64_t in_channels_dst) {
  if (in_channels == in_channels_dst) return std::to_string(in_channels);
  std::string text = "(";  // appended, not "(" + ...: gcc 12 warns (-Wrestrict) on that insert
  text += std::to_string(in_channels);
  text += ", ";
  text += std::to_string(in_channels_dst);
  return text + ")";
}

}  // namespace tessera::pt
