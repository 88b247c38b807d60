#include "column_blocks.hpp"

#include <algorithm>
#include <numeric>

#include "outputs.hpp"

namespace tessera::pt {

namespace {

// Same storage, dtype, device and rows (more than one, so the row stride means something), packed
// columns and one row stride.
bool share_rows(const std::vector<at::Tensor>& ts) {
  if (ts.empty()) return false;
  const at::Tensor& a = ts[0];
  for (const at::Tensor& t : ts)
    if (!t.defined() || t.dim() != 2 || t.size(0) != a.size(0) || t.size(0) < 2 || t.stride(1) != 1 ||
        t.stride(0) != a.stride(0) || t.scalar_type() != a.scalar_type() || t.device() != a.device() ||
        !t.is_alias_of(a))
      return false;
  return true;
}

}  // namespace

std::vector<at::Tensor> empty_like_blocks(const std::vector<at::Tensor>& like) {
  std::vector<at::Tensor> out;
  if (share_rows(like)) {
    // Column offsets from the leftmost block; they must tile [0, row stride) exactly.
    int64_t base = like[0].storage_offset();
    for (const at::Tensor& t : like) base = std::min(base, t.storage_offset());
    std::vector<size_t> order(like.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return like[a].storage_offset() < like[b].storage_offset(); });
    int64_t next = 0;  // every block must start where the previous one ended (no overlap, no gap)
    bool tiled = true;
    for (size_t i : order) {
      tiled = tiled && like[i].storage_offset() - base == next;
      next += like[i].size(1);
    }
    const int64_t width = like[0].stride(0);
    if (tiled && next == width) {
      const at::Tensor buf = like[0].is_cpu() ? empty_output({like[0].size(0), width}, like[0].options())
                                              : at::empty({like[0].size(0), width}, like[0].options());
      for (const at::Tensor& t : like) out.push_back(buf.narrow(1, t.storage_offset() - base, t.size(1)));
      return out;
    }
  }
  for (const at::Tensor& t : like) out.push_back(empty_output_like(t));
  return out;
}

at::Tensor as_one_matrix(const std::vector<at::Tensor>& blocks) {
  if (!share_rows(blocks)) return {};
  int64_t width = 0;
  for (const at::Tensor& b : blocks) {
    if (b.storage_offset() != blocks[0].storage_offset() + width) return {};
    width += b.size(1);
  }
  if (blocks[0].stride(0) != width) return {};
  return blocks[0].as_strided({blocks[0].size(0), width}, {width, 1}, blocks[0].storage_offset());
}

}  // namespace tessera::pt
