#pragma once
// Errors leave a registered op only as c10::Error. On the GPU machine (PyTorch 2.11) a
// tessera::Error (a std::runtime_error) escaping a kernel registered with the dispatcher killed
// the Python process with SIGSEGV instead of raising; torch's own error type is the supported way
// to raise from custom ops. Every kernel and op is registered through these wrappers, which keep
// the message (which names the problem and where) and raise it as a RuntimeError in Python.
#include <c10/util/Exception.h>

#include <exception>
#include <utility>

namespace tessera::pt {

template <auto Fn> struct Guarded;

template <class R, class... A, R (*Fn)(A...)>
struct Guarded<Fn> {
  static R call(A... args) {
    try {
      return Fn(std::forward<A>(args)...);
    } catch (const c10::Error&) {
      throw;
    } catch (const std::exception& e) {
      TORCH_CHECK(false, e.what());
    }
    __builtin_unreachable();
  }
};

}  // namespace tessera::pt

// For m.impl(name, TESSERA_TORCH_FN(fn)) and m.def(schema, TESSERA_OP(fn)).
#define TESSERA_TORCH_FN(fn) TORCH_FN(::tessera::pt::Guarded<&fn>::call)
#define TESSERA_OP(fn) (&::tessera::pt::Guarded<&fn>::call)
