#pragma once
// An op's optional tensor arguments (`Tensor?` in its schema) as its kernels take them.
#include <ATen/ATen.h>

namespace tessera::pt {

using OptTensor = c10::optional<at::Tensor>;

// Whether the argument was given as a tensor (None and an undefined tensor are both "not given").
inline bool has(const OptTensor& t) { return t.has_value() && t->defined(); }
// The argument, or an undefined tensor where it was not given.
inline at::Tensor or_undefined(const OptTensor& t) { return t.has_value() ? *t : at::Tensor(); }

}  // namespace tessera::pt
