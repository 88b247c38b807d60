#pragma once
// What the attention layers' forward_with_attention returns: PyG's return_attention_weights = True.
#include <torch/torch.h>

#include "tessera/torch/graph.hpp"

namespace tessera::nn {

struct AttentionWeights {
  torch::Tensor out;   // the layer's output, as forward's
  pt::Graph graph;     // the graph attended over (GATv2 with add_self_loops: the input's without its
                       // self-loops and with one per node, PyG's returned edge_index)
  torch::Tensor alpha; // [graph.nnz(), heads] in graph's entry order, in the kernels' accumulation
                       // type (fp32 for 16-bit inputs); not differentiable
};

}  // namespace tessera::nn
