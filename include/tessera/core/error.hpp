#pragma once
// tessera::Error: the one exception type every layer raises for bad input or a failed call.
// The message names what was wrong and where ("edges.txt:17: node id -3 is negative").
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace tessera {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
template <class... Parts>
std::string concat(Parts&&... parts) {
  std::ostringstream os;
  (os << ... << std::forward<Parts>(parts));
  return os.str();
}
}  // namespace detail

// Throws tessera::Error with the streamed parts concatenated.
template <class... Parts>
[[noreturn]] void fail(Parts&&... parts) {
  throw Error(detail::concat(std::forward<Parts>(parts)...));
}

}  // namespace tessera

// TESSERA_CHECK(cond, "what", value, "where"): throws tessera::Error when cond is false.
#define TESSERA_CHECK(cond, ...)                 \
  do {                                           \
    if (!(cond)) ::tessera::fail(__VA_ARGS__);   \
  } while (0)
