#pragma once
// Tensors that are adjacent column blocks of one row-major buffer, as the projection node
// (tessera.linears) returns its outputs: the attention op lays the gradients of such inputs out
// the same way, and the node's backward then takes each run of adjacent gradients as one matrix
// (one dX GEMM, one dW GEMM and one column sum for the run instead of one of each per projection).
#include <ATen/ATen.h>

#include <cstddef>
#include <vector>

namespace tessera::pt {

// Fresh tensors shaped like `like` (every one defined, 2-D). When they are adjacent column blocks
// of one buffer (same storage, rows and dtype, packed columns, one row stride, no gap and no
// overlap between them, in any order), the results are the same blocks, in the same relative
// places, of one new buffer exactly as wide as they are together; otherwise each is its own tensor.
// CPU buffers are the ops' output memory (outputs.hpp).
std::vector<at::Tensor> empty_like_blocks(const std::vector<at::Tensor>& like);

// blocks[begin, end): a run of adjacent column blocks of one buffer, in this order, and the
// [rows, their total width] matrix they form (a view with the buffer's row stride); a run of one
// is the block itself.
struct BlockRun {
  size_t begin = 0, end = 0;
  at::Tensor matrix;
};
// The maximal runs of the defined blocks, in order (undefined blocks belong to none).
std::vector<BlockRun> block_runs(const std::vector<at::Tensor>& blocks);

}  // namespace tessera::pt
