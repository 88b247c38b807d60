#pragma once
// Dropout for the models' training loops (tessera train): each element kept with probability
// 1 - p and scaled by 1 / (1 - p), as torch::dropout. On the CPU the keep mask is counter-based
// (splitmix64 of the element's index under a seed drawn from torch's generator, so --seed still
// reproduces a run): drawn in parallel, the same for every thread count, and recomputed in the
// backward instead of stored. torch 1.13's CPU dropout draws it serially with MT19937 and makes
// three passes (bernoulli_, div_, mul): 128 ms of the ~240 ms of a Cora GCN epoch here, on the
// 2708 x 1433 input features. On CUDA (torch's fused kernel is fast) this is torch::dropout.
#include <torch/torch.h>

namespace tessera::nn {

torch::Tensor dropout(const torch::Tensor& x, double p, bool training);

// A seed for a counter-based mask (this dropout's, the attention kernels' dropout on alpha), drawn
// from torch's default generator so that torch.manual_seed / --seed reproduce it.
int64_t dropout_seed();

}  // namespace tessera::nn
