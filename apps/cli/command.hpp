#pragma once
// Subcommands register themselves: each apps/cli/<name>.cpp defines one with
// TESSERA_CLI_COMMAND, so adding a command never edits main.cpp.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tessera::cli {

// setup adds the subcommand's options to `sub` and returns the action run when it is chosen.
using Setup = std::function<std::function<int()>(CLI::App& sub)>;

struct Command {
  std::string name, help;
  Setup setup;
  int order;
};

std::vector<Command>& commands();

// Number checks whose messages read well: CLI11's PositiveNumber and NonNegativeNumber print the
// range of a double ("Value 0 not in range 0.000000 to 179769313486231570814527423731704...").
// Usage errors read "--hidden: must be positive, got 0".
inline CLI::Validator number_at_least(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end == nullptr || *end != '\0') return "expected a number, got '" + text + "'";
        if (allow_zero ? v >= 0 : v > 0) return {};
        return std::string(allow_zero ? "must not be negative" : "must be positive") + ", got " + text;
      },
      allow_zero ? "NONNEGATIVE" : "POSITIVE");
}
inline CLI::Validator positive() { return number_at_least(false); }
inline CLI::Validator non_negative() { return number_at_least(true); }

// A value the library itself checks (check throws tessera::Error saying why it is refused, e.g.
// parse_dtype), checked while parsing: a typo is a usage error, not a failure after the work.
using Check = std::function<void(const std::string&)>;
inline std::string refusal(const Check& check, const std::string& value) {
  try {
    check(value);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}
inline CLI::Validator checked_by(Check check, std::string name) {
  return CLI::Validator([check](std::string& value) { return refusal(check, value); }, std::move(name));
}

// An output file whose directory exists and (check, when given) whose name its writer accepts.
inline CLI::Validator output_file(Check check = {}) {
  return CLI::Validator(
      [check](std::string& path) -> std::string {
        const std::filesystem::path dir = std::filesystem::path(path).parent_path();
        if (!dir.empty() && !std::filesystem::is_directory(dir)) return "directory " + dir.string() + " does not exist";
        return check ? refusal(check, path) : std::string();
      },
      "FILE");
}

struct Registrar {
  Registrar(std::string name, std::string help, int order, Setup setup) {
    commands().push_back({std::move(name), std::move(help), std::move(setup), order});
  }
};

}  // namespace tessera::cli

#define TESSERA_CLI_CONCAT2(a, b) a##b
#define TESSERA_CLI_CONCAT(a, b) TESSERA_CLI_CONCAT2(a, b)
#define TESSERA_CLI_COMMAND(name, help, order, setup) \
  static ::tessera::cli::Registrar TESSERA_CLI_CONCAT(tessera_cli_cmd_, __LINE__)(name, help, order, setup)
