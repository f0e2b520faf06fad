// SPDX-License-Identifier: Apache-2.0
// Errors as values: a Diagnostic is one clang-style message with an optional source location;
// Status is zero or more of them; Result<T> is a value or a Status. Library code reports bad
// input only through these, never by throwing, printing or exiting.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nhlo {

enum class Severity : uint8_t { kError, kWarning, kNote, kRemark };

/// One message. `line`/`col` are 1-based; 0 means "no location". `line_text` is the source line
/// shown under the message with a caret at `col`.
struct Diagnostic {
  Severity severity = Severity::kError;
  std::string file;
  int line = 0;
  int col = 0;
  std::string message;
  std::string line_text;
};

/// The most columns of a source line a diagnostic echoes (a window around the caret).
inline constexpr size_t kMaxEchoColumns = 200;

/// Formats `file:line:col: error: message` plus the source line and a caret, clang-style. A
/// diagnostic without a file is prefixed by `program` (`nhlo-run: error: ...`) when given.
std::string FormatDiagnostic(const Diagnostic& diag, std::string_view program = {});

/// Builds a diagnostic for byte `offset` of `text` (the whole source buffer named `file`).
Diagnostic DiagnosticAt(std::string_view file, std::string_view text, size_t offset, std::string message,
                        Severity severity = Severity::kError);

/// Where every line of a text starts, so that many diagnostics in one file each find their line
/// by a binary search; DiagnosticAt without it counts lines from the text's start every time.
class LineStarts {
 public:
  explicit LineStarts(std::string_view text);
  /// The 1-based line holding byte `offset` (clamped to the text) and the offset it starts at.
  std::pair<int, size_t> Locate(size_t offset) const;

 private:
  std::vector<size_t> starts_;
  size_t size_ = 0;
};
Diagnostic DiagnosticAt(std::string_view file, std::string_view text, const LineStarts& lines, size_t offset,
                        std::string message, Severity severity = Severity::kError);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(const Status& other) : diags_(other.diags_ ? new std::vector<Diagnostic>(*other.diags_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) diags_.reset(other.diags_ ? new std::vector<Diagnostic>(*other.diags_) : nullptr);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status Error(std::string message) {
    return FromDiagnostic(Diagnostic{Severity::kError, {}, 0, 0, std::move(message), {}});
  }
  static Status FromDiagnostic(Diagnostic diag) {
    Status s;
    s.diagnostics().push_back(std::move(diag));
    return s;
  }
  bool ok() const { return !diags_ || diags_->empty(); }
  const std::vector<Diagnostic>& diagnostics() const { return diags_ ? *diags_ : kNoDiagnostics; }
  std::vector<Diagnostic>& diagnostics() {
    if (!diags_) diags_.reset(new std::vector<Diagnostic>());
    return *diags_;
  }
  /// The first message without location (for tests and one-line reports).
  std::string message() const { return ok() ? std::string() : diags_->front().message; }
  void Append(const Status& other) {
    if (other.ok()) return;
    diagnostics().insert(diagnostics().end(), other.diags_->begin(), other.diags_->end());
  }
  /// Every diagnostic formatted clang-style, concatenated; `program` prefixes the ones without
  /// a file.
  std::string ToString(std::string_view program = {}) const;

 private:
  static const std::vector<Diagnostic> kNoDiagnostics;
  // One pointer, null when OK: every parse step returns a Status, and an empty one costs a
  // null test instead of a vector's construction and destruction. The deleter is out of line so
  // that the test is all that is inlined: with `delete` inline, GCC outlines the whole
  // destructor and every Status pays a call (1% of a parse).
  struct DeleteDiagnostics {
    void operator()(std::vector<Diagnostic>* diags) const;
  };
  std::unique_ptr<std::vector<Diagnostic>, DeleteDiagnostics> diags_;
};

inline Status OkStatus() { return Status(); }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design
  bool ok() const { return value_.has_value(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }  // `F().status()` moves, never copies
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T& operator*() { return *value_; }
  T* operator->() { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

#define NHLO_CONCAT_INNER(a, b) a##b
#define NHLO_CONCAT(a, b) NHLO_CONCAT_INNER(a, b)

/// Returns the Status of `expr` from the enclosing function if it is an error.
#define NHLO_TRY(expr)                           \
  do {                                           \
    ::nhlo::Status nhlo_status_ = (expr);        \
    if (!nhlo_status_.ok()) return nhlo_status_; \
  } while (0)

#define NHLO_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp.value())

/// `NHLO_ASSIGN_OR_RETURN(auto x, ComputeX());` unwraps a Result or returns its Status.
#define NHLO_ASSIGN_OR_RETURN(lhs, expr) NHLO_ASSIGN_OR_RETURN_IMPL(NHLO_CONCAT(nhlo_result_, __LINE__), lhs, expr)

/// Aborts with a message that names a compiler bug; for internal invariants only, never for input.
[[noreturn]] void InternalError(const char* file, int line, const std::string& message);
#define NHLO_CHECK(cond, msg)                                      \
  do {                                                             \
    if (!(cond)) ::nhlo::InternalError(__FILE__, __LINE__, (msg)); \
  } while (0)

}  // namespace nhlo
