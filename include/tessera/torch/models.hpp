#pragma once
// Node-classification models by name: the hook `tessera train --model NAME` uses. A family adds
// its model in its own source file with a static registrar, e.g. in src/torch/sage.cpp:
//
//   static tessera::nn::ModelRegistrar reg("sage", "GraphSAGE (mean)", [](const ModelConfig& c) {
//     return std::make_shared<SageModel>(c);
//   });
//
// Every model maps (features [N, in], graph) to logits [N, classes] and owns its layers as
// registered submodules, so optimizers, state_dict and .to(device) work as usual.
#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/torch/dropout.hpp"
#include "tessera/torch/graph.hpp"

namespace tessera::nn {

struct ModelConfig {
  int64_t in_channels = 0, hidden = 64, out_channels = 0;
  int layers = 2;
  double dropout = 0.5;
  std::map<std::string, std::string> extra;  // family-specific options (heads=8, aggr=mean, ...)
};

class NodeModel : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(const torch::Tensor& x, const pt::Graph& graph) = 0;
};

// `layers` convolutions with dropout before each and an activation between them: the shape of
// every node-classification model here. make_conv(in, out, last) builds one layer (a torch module
// holder); the layers between the first and the last are `hidden` wide (c.hidden unless given:
// attention models round it to a multiple of their heads).
template <class Conv>
class StackedModel final : public NodeModel {
 public:
  using MakeConv = std::function<Conv(int64_t in, int64_t out, bool last)>;
  using Activation = std::function<torch::Tensor(const torch::Tensor&)>;
  StackedModel(const std::string& name, const ModelConfig& c, const MakeConv& make_conv,
               Activation activation = [](const torch::Tensor& h) { return torch::relu(h); }, int64_t hidden = 0)
      : dropout_(c.dropout), activation_(std::move(activation)) {
    TESSERA_CHECK(c.layers >= 1, name, ": --layers must be >= 1, got ", c.layers);
    const int64_t width = hidden > 0 ? hidden : c.hidden;
    for (int l = 0; l < c.layers; ++l) {
      const bool last = l + 1 == c.layers;
      const int64_t in = l == 0 ? c.in_channels : width;
      const int64_t out = last ? c.out_channels : width;
      convs_.push_back(register_module("conv" + std::to_string(l), make_conv(in, out, last)));
    }
  }
  torch::Tensor forward(const torch::Tensor& x, const pt::Graph& graph) override {
    auto h = x;
    for (size_t l = 0; l < convs_.size(); ++l) {
      h = tessera::nn::dropout(h, dropout_, is_training());
      h = convs_[l]->forward(h, graph);
      if (l + 1 < convs_.size()) h = activation_(h);
    }
    return h;
  }

 private:
  double dropout_;
  Activation activation_;
  std::vector<Conv> convs_;
};

// The attention models: --heads H (ModelConfig::extra; default_heads when not given) heads of
// hidden / H channels (at least one) concatenated between the layers, so the hidden width is
// rounded down to a multiple of H; ELU between layers. make(in, channels per head, H, last)
// builds one layer; the last one gets out = the classes as its channels.
template <class Conv>
std::shared_ptr<NodeModel> attention_model(const std::string& name, const ModelConfig& c, int64_t default_heads,
                                           const std::function<Conv(int64_t in, int64_t out, int64_t heads, bool last)>& make) {
  const auto it = c.extra.find("heads");
  const int64_t H = it == c.extra.end() ? default_heads : std::stoll(it->second);
  TESSERA_CHECK(H >= 1, "--heads must be >= 1, got ", H);
  const int64_t per_head = std::max<int64_t>(1, c.hidden / H);
  return std::make_shared<StackedModel<Conv>>(
      name, c, [make, H, per_head](int64_t in, int64_t out, bool last) { return make(in, last ? out : per_head, H, last); },
      [](const torch::Tensor& h) { return torch::elu(h); }, per_head * H);
}

using ModelFactory = std::function<std::shared_ptr<NodeModel>(const ModelConfig&)>;

struct ModelEntry {
  std::string help;
  ModelFactory make;
};

inline std::map<std::string, ModelEntry>& model_registry() {
  static std::map<std::string, ModelEntry> registry;
  return registry;
}

struct ModelRegistrar {
  ModelRegistrar(const std::string& name, std::string help, ModelFactory make) {
    model_registry()[name] = ModelEntry{std::move(help), std::move(make)};
  }
};

inline std::shared_ptr<NodeModel> make_model(const std::string& name, const ModelConfig& cfg) {
  auto& reg = model_registry();
  auto it = reg.find(name);
  if (it == reg.end()) {
    std::string known;
    for (const auto& [n, e] : reg) known += (known.empty() ? "" : ", ") + n;
    fail("unknown model '", name, "' (known: ", known, ")");
  }
  return it->second.make(cfg);
}

}  // namespace tessera::nn
