#pragma once
// Checks of a C++ layer's node features that name the layer and what it expected (the Python
// layers' tessera/nn/_inputs.py). Without them a wrong x fails inside a projection with libtorch's
// "mat1 and mat2 shapes cannot be multiplied (5x7 and 4x6)".
#include <torch/torch.h>

#include "tessera/core/error.hpp"
#include "tessera/torch/graph.hpp"

namespace tessera::pt {

// x: a defined [nodes, in_channels] tensor.
inline void check_node_features(const char* layer, const torch::Tensor& x, int64_t in_channels) {
  TESSERA_CHECK(x.defined() && x.dim() == 2, layer, ": x must be a 2-D [nodes, features] tensor, got shape ",
                x.defined() ? x.sizes() : c10::IntArrayRef{});
  TESSERA_CHECK(x.size(1) == in_channels, layer, ": x has ", x.size(1),
                " features per node, but the layer was built for in_channels = ", in_channels);
}

// ... and one row per node of g (its rows and its columns).
inline void check_node_features(const char* layer, const torch::Tensor& x, int64_t in_channels, const Graph& g) {
  check_node_features(layer, x, in_channels);
  TESSERA_CHECK(g.rows() == x.size(0) && g.cols() == x.size(0), layer, ": graph is ", g.rows(), " x ", g.cols(),
                " but x has ", x.size(0), " nodes");
}

}  // namespace tessera::pt
