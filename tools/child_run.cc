// SPDX-License-Identifier: Apache-2.0
#include "child_run.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

namespace nhlo_tools {

bool RunInChild(unsigned timeout_seconds, uint64_t address_space_bytes, const std::function<std::string()>& body,
                ChildOutcome& outcome) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  std::cout << std::flush;  // or the child's exit would print the parent's buffered output again
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    int saved = errno;
    close(fds[0]);
    close(fds[1]);
    errno = saved;
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    if (address_space_bytes != 0) {
      rlimit as{};
      as.rlim_cur = as.rlim_max = address_space_bytes;
      setrlimit(RLIMIT_AS, &as);
    }
    alarm(timeout_seconds);
    std::string report = body();
    for (size_t done = 0; done < report.size();) {
      ssize_t n = write(fds[1], report.data() + done, report.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    report.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  outcome = ChildOutcome{};
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    outcome.end = ChildOutcome::End::kTimedOut;
  } else if (WIFSIGNALED(status)) {
    outcome.end = ChildOutcome::End::kCrashed;
    outcome.crash = strsignal(WTERMSIG(status));
  } else if (report.empty()) {
    outcome.end = ChildOutcome::End::kNoReport;
  } else {
    outcome.end = ChildOutcome::End::kReported;
    outcome.report = std::move(report);
  }
  return true;
}

}  // namespace nhlo_tools
