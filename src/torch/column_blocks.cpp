#include "column_blocks.hpp"

#include <algorithm>
#include <numeric>

#include "outputs.hpp"

namespace tessera::pt {

namespace {

// Two blocks of one buffer's rows: same storage, dtype, device and rows (more than one, so the row
// stride means something), packed columns, one row stride.
bool same_rows(const at::Tensor& a, const at::Tensor& t) {
  return a.defined() && t.defined() && a.dim() == 2 && t.dim() == 2 && t.size(0) == a.size(0) && a.size(0) > 1 &&
         a.stride(1) == 1 && t.stride(1) == 1 && t.stride(0) == a.stride(0) && t.scalar_type() == a.scalar_type() &&
         t.device() == a.device() && t.is_alias_of(a);
}

}  // namespace

std::vector<at::Tensor> empty_like_blocks(const std::vector<at::Tensor>& like) {
  std::vector<at::Tensor> out;
  bool shared = !like.empty();
  for (const at::Tensor& t : like) shared = shared && same_rows(like[0], t);
  if (shared) {
    // Sorted by column offset, every block must start where the previous one ended.
    std::vector<size_t> order(like.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return like[a].storage_offset() < like[b].storage_offset(); });
    const int64_t base = like[order[0]].storage_offset();
    int64_t width = 0;
    bool adjacent = true;
    for (size_t i : order) {
      adjacent = adjacent && like[i].storage_offset() - base == width;
      width += like[i].size(1);
    }
    if (adjacent && width <= like[0].stride(0)) {
      const at::Tensor buf = empty_output({like[0].size(0), width}, like[0].options());
      for (const at::Tensor& t : like) out.push_back(buf.narrow(1, t.storage_offset() - base, t.size(1)));
      return out;
    }
  }
  for (const at::Tensor& t : like) out.push_back(empty_output_like(t));
  return out;
}

std::vector<BlockRun> block_runs(const std::vector<at::Tensor>& blocks) {
  std::vector<BlockRun> runs;
  for (size_t i = 0; i < blocks.size();) {
    if (!blocks[i].defined()) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    int64_t width = blocks[i].size(1);
    while (j < blocks.size() && same_rows(blocks[i], blocks[j]) &&
           blocks[j].storage_offset() == blocks[i].storage_offset() + width &&
           width + blocks[j].size(1) <= blocks[i].stride(0)) {
      width += blocks[j].size(1);
      ++j;
    }
    const at::Tensor& b = blocks[i];
    at::Tensor m = j == i + 1 ? b : b.as_strided({b.size(0), width}, {b.stride(0), 1}, b.storage_offset());
    runs.push_back({i, j, m});
    i = j;
  }
  return runs;
}

}  // namespace tessera::pt
