// config: how an actor system is configured. troupe::config{argc, argv} starts from the
// defaults, applies the environment (TROUPE_THREADS, TROUPE_THROUGHPUT), then the command line
// (--troupe.threads=N, --troupe.throughput=N), and leaves every other argument to the program.
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "troupe/troupe.hpp"

int main(int argc, char** argv) {
  // This run's own settings, from the real command line and environment.
  troupe::config settings{argc, argv};
  troupe::actor_system system{settings};
  std::cout << "this run: threads=" << settings.threads << " (0: one per hardware thread), "
            << system.settings().resolved_threads() << " workers\n";

  // The same rules on made-up inputs, so the result can be checked. Save TROUPE_THREADS first.
  std::optional<std::string> saved;
  if (const char* value = std::getenv("TROUPE_THREADS")) saved = value;
  setenv("TROUPE_THREADS", "2", 1);
  const char* plain[] = {"program", "input.txt"};
  const char* with_option[] = {"program", "--troupe.threads=3", "input.txt"};
  troupe::config from_environment{2, plain};
  troupe::config from_command_line{3, with_option};
  if (saved)
    setenv("TROUPE_THREADS", saved->c_str(), 1);
  else
    unsetenv("TROUPE_THREADS");
  std::cout << "TROUPE_THREADS=2: threads=" << from_environment.threads << "\n";
  std::cout << "TROUPE_THREADS=2 and --troupe.threads=3: threads=" << from_command_line.threads
            << " (the command line wins)\n";

  // A misspelt troupe option is an error that names it, not something silently ignored.
  troupe::errc misspelt = troupe::errc::none;
  const char* typo[] = {"program", "--troupe.thread=3"};
  try {
    troupe::config{2, typo};
  } catch (const troupe::error& e) {
    misspelt = e.code();
    std::cout << "--troupe.thread=3: " << e.what() << "\n";
  }

  const std::vector<std::string> program_args{"program", "input.txt"};
  bool ok = from_environment.threads == 2 && from_command_line.threads == 3 &&
            from_command_line.remaining_args == program_args &&
            misspelt == troupe::errc::invalid_argument;
  std::cout << "configuration rules hold: " << (ok ? "yes" : "no") << "\n";
  return ok ? 0 : 1;
}
