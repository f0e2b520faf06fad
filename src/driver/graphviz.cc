// SPDX-License-Identifier: Apache-2.0
#include "driver/graphviz.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace nhlo {
namespace {

// A temporary file that is removed when this goes out of scope, whatever happened in between.
class TempFile {
 public:
  explicit TempFile(const std::string& suffix) {
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
    if (ec) dir = "/tmp";
    std::string pattern = (dir / ("nhlo-graph-XXXXXX" + suffix)).string();
    int fd = mkstemps(pattern.data(), static_cast<int>(suffix.size()));
    if (fd < 0) {
      error_ = std::strerror(errno);
      return;
    }
    close(fd);
    path_ = pattern;
  }
  ~TempFile() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  std::string error_;
};

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::Error("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << f.rdbuf();
  return text.str();
}

// The first lines of a child's standard error, enough to say what went wrong.
std::string FirstLines(std::string_view text, int lines) {
  size_t end = 0;
  for (int i = 0; i < lines && end < text.size(); ++i) {
    size_t next = text.find('\n', end);
    end = next == std::string_view::npos ? text.size() : next + 1;
  }
  std::string out(text.substr(0, end));
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

Result<std::string> RunGraphviz(std::string_view dot_text, const std::string& program) {
  TempFile input(".dot"), output(".svg"), errors(".txt");
  for (const TempFile* f : {&input, &output, &errors})
    if (!f->error().empty()) return Status::Error("cannot create a temporary file for Graphviz: " + f->error());
  {
    std::ofstream f(input.path(), std::ios::binary | std::ios::trunc);
    f.write(dot_text.data(), static_cast<std::streamsize>(dot_text.size()));
    f.flush();
    if (!f) return Status::Error("cannot write '" + input.path() + "': " + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.path().c_str(), O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errors.path().c_str(), O_WRONLY | O_TRUNC, 0);
  std::string format = "-Tsvg";
  std::vector<char*> argv = {const_cast<char*>(program.c_str()), format.data(), const_cast<char*>(input.path().c_str()),
                             nullptr};
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == ENOENT)
    return Status::Error("cannot run '" + program +
                         "': not found on PATH; the HTML view needs Graphviz to lay out its graphs "
                         "(tools/bootstrap installs it: apt-get install graphviz)");
  if (spawned != 0) return Status::Error("cannot run '" + program + "': " + std::strerror(spawned));
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0)
    if (errno != EINTR) return Status::Error("waiting for '" + program + "': " + std::strerror(errno));
  Result<std::string> stderr_text = ReadWholeFile(errors.path());
  std::string complaint = stderr_text.ok() ? FirstLines(*stderr_text, 5) : "";
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    std::string how = WIFEXITED(wait_status) ? "exit status " + std::to_string(WEXITSTATUS(wait_status))
                                             : "signal " + std::to_string(WTERMSIG(wait_status));
    return Status::Error("'" + program + "' failed (" + how + ")" + (complaint.empty() ? "" : ": " + complaint));
  }
  return ReadWholeFile(output.path());
}

Result<std::vector<std::string_view>> SplitSvgDocuments(std::string_view output, size_t expected) {
  std::vector<std::string_view> svgs;
  size_t at = 0;
  while (true) {
    size_t start = output.find("<svg", at);
    if (start == std::string_view::npos) break;
    constexpr std::string_view kEnd = "</svg>";
    size_t end = output.find(kEnd, start);
    if (end == std::string_view::npos) break;
    svgs.push_back(output.substr(start, end + kEnd.size() - start));
    at = end + kEnd.size();
  }
  if (svgs.size() != expected)
    return Status::Error("Graphviz printed " + std::to_string(svgs.size()) + " SVG documents for " +
                         std::to_string(expected) + " graphs");
  return svgs;
}

}  // namespace nhlo
