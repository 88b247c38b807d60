#pragma once
// Tensors that are the column blocks of one row-major buffer, as the projection node
// (tessera.linears) returns its outputs: the attention op lays the gradients of such inputs out
// the same way, and the node's backward then takes its gradients as one matrix (one dX GEMM, one
// dW GEMM and one column sum instead of one of each per projection).
#include <ATen/ATen.h>

#include <vector>

namespace tessera::pt {

// Fresh tensors shaped like `like` (every one defined, 2-D). When they are column blocks that
// tile one buffer exactly (same storage, rows and dtype, packed columns, one row stride equal to
// the blocks' total width), the results are the same blocks of one new buffer; otherwise each is
// its own tensor. CPU buffers are the ops' output memory (outputs.hpp).
std::vector<at::Tensor> empty_like_blocks(const std::vector<at::Tensor>& like);

// blocks[0..n) as one [rows, total width] matrix when they are consecutive column blocks, in this
// order, of one buffer whose row stride is their total width; undefined otherwise.
at::Tensor as_one_matrix(const std::vector<at::Tensor>& blocks);

}  // namespace tessera::pt
