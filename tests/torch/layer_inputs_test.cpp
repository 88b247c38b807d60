// The C++ layers' answer to malformed node features: a tessera::Error naming the layer and what it
// expected (src/torch/layer_inputs.hpp), before any projection runs. The Python layers' twin is
// tests/python/test_layer_inputs.py.
#include <torch/torch.h>

#include <functional>
#include <string>

#include "support/testing.hpp"
#include "tessera/torch/gatv2.hpp"
#include "tessera/torch/gcn.hpp"
#include "tessera/torch/sage.hpp"
#include "tessera/torch/transformer.hpp"

namespace tessera {
namespace {

using Forward = std::function<torch::Tensor(const torch::Tensor&, const pt::Graph&)>;

std::string error_of(const Forward& f, const torch::Tensor& x, const pt::Graph& g) {
  try {
    f(x, g);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LayerInputs, NodeFeaturesOfTheWrongShapeAreNamed) {
  const auto g = pt::Graph::from_edge_index(torch::tensor({0, 1, 2, 1, 2, 3}, torch::kLong).view({2, 3}), {}, 5);
  nn::GCNConv gcn(4, 3);
  nn::SAGEConv sage(4, 3);
  nn::GATv2Conv gat(nn::GATv2ConvOptions(4, 3).heads(2));
  nn::TransformerConv tr(nn::TransformerConvOptions(4, 3).heads(2));
  const std::pair<std::string, Forward> layers[] = {
      {"GCNConv", [&](const torch::Tensor& x, const pt::Graph& gr) { return gcn->forward(x, gr); }},
      {"SAGEConv", [&](const torch::Tensor& x, const pt::Graph& gr) { return sage->forward(x, gr); }},
      {"GATv2Conv", [&](const torch::Tensor& x, const pt::Graph& gr) { return gat->forward(x, gr); }},
      {"TransformerConv", [&](const torch::Tensor& x, const pt::Graph& gr) { return tr->forward(x, gr); }},
  };
  for (const auto& [name, f] : layers) {
    EXPECT_EQ(error_of(f, torch::randn({5, 7}), g),
              name + ": x has 7 features per node, but the layer was built for in_channels = 4");
    EXPECT_EQ(error_of(f, torch::randn({5}), g), name + ": x must be a 2-D [nodes, features] tensor, got shape [5]");
    EXPECT_EQ(error_of(f, torch::Tensor(), g), name + ": x must be a 2-D [nodes, features] tensor, got shape []");
    EXPECT_EQ(error_of(f, torch::randn({6, 4}), g), name + ": graph is 5 x 5 but x has 6 nodes");
    EXPECT_EQ(f(torch::randn({5, 4}), g).size(0), 5);  // and the well-formed call still runs
  }
  // The edge_index overloads check x before they build the graph from it.
  EXPECT_THROW(gcn->forward(torch::randn({5, 7}), torch::tensor({0, 1}, torch::kLong).view({2, 1})), Error);
  EXPECT_THROW(sage->forward(torch::randn({5}), torch::tensor({0, 1}, torch::kLong).view({2, 1})), Error);
}

}  // namespace
}  // namespace tessera
