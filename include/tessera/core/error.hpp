#pragma once
// tessera::Error: the one exception type every layer raises for bad input or a failed call.
// The message names what was wrong and where ("edges.txt:17: node id -3 is negative").
#include <charconv>
#include <cstdint>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tessera {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
// Messages are assembled without iostream number formatting: numbers go through std::to_chars,
// which needs no locale. A message then reads the same under any global locale, and building it
// touches no locale state. (Inside the Python process of the GPU machine's torch 2.11, streaming
// an integer into a std::ostringstream from this library crashed with SIGSEGV, while strings
// streamed fine; every error message with a number in it killed the interpreter.)
template <class T>
void append(std::string& out, const T& v);

// Shapes and index lists: anything iterable over numbers (c10::IntArrayRef, std::vector<int64_t>).
template <class T>
concept NumberRange = requires(const T& v) {
  std::begin(v);
  std::end(v);
  requires std::is_arithmetic_v<std::remove_cvref_t<decltype(*std::begin(v))>>;
};

template <class T>
void append_number(std::string& out, T v, int base = 10) {
  char buf[128];
  std::to_chars_result r;
  if constexpr (std::is_floating_point_v<T>)
    r = std::to_chars(buf, buf + sizeof buf, v);
  else
    r = std::to_chars(buf, buf + sizeof buf, v, base);
  out.append(buf, r.ptr);
}

template <class T>
void append(std::string& out, const T& v) {
  using D = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<D, bool>) {
    out += v ? "true" : "false";
  } else if constexpr (std::is_same_v<D, char>) {
    out += v;
  } else if constexpr (std::is_arithmetic_v<D>) {
    append_number(out, v);
  } else if constexpr (std::is_same_v<D, const char*> || std::is_same_v<D, char*>) {
    out += v ? std::string_view(v) : std::string_view("(null)");
  } else if constexpr (std::is_convertible_v<const D&, std::string_view>) {
    out += std::string_view(v);
  } else if constexpr (std::is_pointer_v<D> || std::is_null_pointer_v<D>) {
    out += "0x";
    append_number(out, reinterpret_cast<std::uintptr_t>(v), 16);
  } else if constexpr (requires { v.str(); }) {  // Device, tune keys, c10::Device: their own text
    append(out, v.str());
  } else if constexpr (NumberRange<D>) {
    out += '[';  // as [2, 3], like c10's printing of sizes
    bool first = true;
    for (const auto& e : v) {
      if (!first) out += ", ";
      first = false;
      append(out, e);
    }
    out += ']';
  } else if constexpr (std::is_enum_v<D> && !requires(std::ostream& os) { os << v; }) {
    append_number(out, static_cast<std::underlying_type_t<D>>(v));
  } else {  // anything else with an operator<< (enums that print their names, ...)
    std::ostringstream os;
    os << v;
    out += os.str();
  }
}

template <class... Parts>
std::string concat(Parts&&... parts) {
  std::string out;
  (append(out, parts), ...);
  return out;
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
