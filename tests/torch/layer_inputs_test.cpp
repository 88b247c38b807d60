// The C++ layers' answer to malformed node features: a tessera::Error naming the layer and what it
// expected (src/torch/layer_inputs.hpp), before any projection runs. The Python layers' twin is
// tests/python/test_layer_inputs.py.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

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

// Four layers behind one signature, for the checks every layer makes alike.
struct Layers {
  nn::GCNConv gcn{4, 3};
  nn::SAGEConv sage{4, 3};
  nn::GATv2Conv gat{nn::GATv2ConvOptions(4, 3).heads(2)};
  nn::TransformerConv tr{nn::TransformerConvOptions(4, 3).heads(2)};
  std::vector<std::pair<std::string, Forward>> all() {
    return {{"GCNConv", [this](const torch::Tensor& x, const pt::Graph& g) { return gcn->forward(x, g); }},
            {"SAGEConv", [this](const torch::Tensor& x, const pt::Graph& g) { return sage->forward(x, g); }},
            {"GATv2Conv", [this](const torch::Tensor& x, const pt::Graph& g) { return gat->forward(x, g); }},
            {"TransformerConv", [this](const torch::Tensor& x, const pt::Graph& g) { return tr->forward(x, g); }}};
  }
};

TEST(LayerInputs, NodeFeaturesOfTheWrongShapeAreNamed) {
  const auto g = pt::Graph::from_edge_index(torch::tensor({0, 1, 2, 1, 2, 3}, torch::kLong).view({2, 3}), {}, 5);
  Layers layers;
  for (const auto& [name, f] : layers.all()) {
    EXPECT_EQ(error_of(f, torch::randn({5, 7}), g),
              name + ": x has 7 features per node, but the layer was built for in_channels = 4");
    EXPECT_EQ(error_of(f, torch::randn({5}), g), name + ": x must be a 2-D [nodes, features] tensor, got shape [5]");
    EXPECT_EQ(error_of(f, torch::Tensor(), g), name + ": x must be a 2-D [nodes, features] tensor, got shape []");
    EXPECT_EQ(error_of(f, torch::randn({6, 4}), g), name + ": graph is 5 x 5 but x has 6 nodes");
    EXPECT_EQ(f(torch::randn({5, 4}), g).size(0), 5);  // and the well-formed call still runs
  }
  // The edge_index overloads check x before they build the graph from it.
  EXPECT_THROW(layers.gcn->forward(torch::randn({5, 7}), torch::tensor({0, 1}, torch::kLong).view({2, 1})), Error);
  EXPECT_THROW(layers.sage->forward(torch::randn({5}), torch::tensor({0, 1}, torch::kLong).view({2, 1})), Error);
}

TEST(LayerInputs, NodeFeaturesOfTheWrongTypeOrDeviceAreNamed) {
  // Without the check libtorch names its own operands ("mat1 and mat2 must have the same dtype").
  const auto g = pt::Graph::from_edge_index(torch::tensor({0, 1, 2, 1, 2, 3}, torch::kLong).view({2, 3}), {}, 5);
  Layers layers;
  for (const auto& [name, f] : layers.all()) {
    for (const auto& [type, type_name] : {std::pair{torch::kLong, "Long"}, std::pair{torch::kBool, "Bool"}})
      EXPECT_EQ(error_of(f, torch::ones({5, 4}, type), g), name + ": x must be a floating-point tensor, got " + type_name);
    EXPECT_EQ(error_of(f, torch::randn({5, 4}, torch::kDouble), g),
              name + ": x is Double but the layer's parameters are Float");
    EXPECT_EQ(error_of(f, torch::randn({5, 4}, torch::Device(torch::kMeta)), g),
              name + ": x is on meta but the layer's parameters are on cpu");
  }
  // The bipartite calls check x_dst too.
  nn::SAGEConv sage(4, 3);
  const auto b = pt::Graph::from_edge_index(torch::tensor({0, 1, 1, 0}, torch::kLong).view({2, 2}), {}, 2, 3);
  try {
    sage->forward(torch::randn({3, 4}), torch::ones({2, 4}, torch::kInt), b);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "SAGEConv: x_dst must be a floating-point tensor, got Int");
  }
}

TEST(LayerInputs, EdgeFeaturesOfTheWrongShapeOrTypeAreNamed) {
  const auto ei = torch::tensor({0, 1, 2, 1, 2, 3}, torch::kLong).view({2, 3});
  const auto x = torch::randn({5, 4});
  nn::GATv2Conv gat(nn::GATv2ConvOptions(4, 3).heads(2).edge_dim(3));
  nn::TransformerConv tr(nn::TransformerConvOptions(4, 3).heads(2).edge_dim(3));
  using EdgeForward = std::function<torch::Tensor(const torch::Tensor&)>;
  const std::pair<std::string, EdgeForward> layers[] = {
      {"GATv2Conv", [&](const torch::Tensor& ea) { return gat->forward(x, ei, ea); }},
      {"TransformerConv", [&](const torch::Tensor& ea) { return tr->forward(x, ei, ea); }}};
  for (const auto& [name, f] : layers) {
    const auto error = [&f = f](const torch::Tensor& ea) {
      try {
        f(ea);
      } catch (const Error& e) {
        return std::string(e.what());
      }
      return std::string("(no error)");
    };
    EXPECT_EQ(error(torch::ones({3, 3}, torch::kLong)), name + ": edge_attr must be a floating-point tensor, got Long");
    EXPECT_EQ(error(torch::randn({3, 2})), name + ": edge_attr is [3, 2], expected [3, 3] (one row per graph entry)");
    EXPECT_EQ(f(torch::randn({3, 3})).size(1), 6);  // and the well-formed call still runs
  }
}

// autocast on the CPU (bf16) for this scope, as torch.autocast("cpu") in Python.
struct CpuAutocast {
  CpuAutocast() { set(true); }
  ~CpuAutocast() { set(false); }
  static void set(bool on) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCPU, on);
#else
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(on);
#endif
    if (!on) at::autocast::clear_cache();
  }
};

TEST(LayerInputs, LayersFollowCpuAutocast) {
  // Autocast casts x and the weights alike, so x's type need not be the parameters' there, and the
  // layers leave their projections to the Linear, which computes them in autocast's type (tessera's
  // own ops are not cast), so the output is in that type too. SAGEConv's root term was an in-place
  // addmm_ on the cast output with the uncast x_dst.
  const auto seed = testing::seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  torch::manual_seed(seed);
  const auto g = pt::Graph::from_edge_index(torch::randint(0, 40, {2, 200}, torch::kLong), {}, 40);
  Layers layers;
  for (const auto& [name, f] : layers.all()) {
    SCOPED_TRACE(name);
    const auto x = torch::randn({40, 4});
    const auto want = f(x, g);
    for (const auto& input : {x, x.to(torch::kBFloat16)}) {
      torch::Tensor out;
      {
        CpuAutocast on;
        out = f(input, g);
      }
      EXPECT_EQ(out.scalar_type(), torch::kBFloat16);
      EXPECT_TRUE(torch::allclose(out.to(torch::kFloat), want, 0.05, 0.05 * want.abs().max().item<double>()));
    }
  }
  // An output of the ops' huge-page size (4 MB: 2^16 x 16 floats), where the CPU projects with one
  // tessera op of its own, in fp32, when autocast is off.
  nn::GCNConv wide(16, 16);
  const auto big = pt::Graph::from_edge_index(torch::randint(0, 1 << 16, {2, 1 << 18}, torch::kLong), {}, 1 << 16);
  const auto x = torch::randn({1 << 16, 16});
  const auto want = wide->forward(x, big);
  torch::Tensor out;
  {
    CpuAutocast on;
    out = wide->forward(x, big);
  }
  EXPECT_EQ(out.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::allclose(out.to(torch::kFloat), want, 0.05, 0.05 * want.abs().max().item<double>()));
}

}  // namespace
}  // namespace tessera
