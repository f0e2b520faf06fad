// SPDX-License-Identifier: Apache-2.0
// A vector that keeps its first N elements inline: the parser collects dims, operands and
// attributes into these before copying them to the arena, so the common case never mallocs.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

namespace nhlo {

template <typename T, size_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVec moves elements bytewise");

 public:
  SmallVec() = default;
  /// `n` copies of `value`.
  SmallVec(size_t n, const T& value) {
    for (size_t i = 0; i < n; ++i) push_back(value);
  }
  SmallVec(const SmallVec& other) { *this = other; }
  SmallVec& operator=(const SmallVec& other) {
    if (this == &other) return *this;
    clear();
    for (const T& v : other) push_back(v);
    return *this;
  }

  void push_back(const T& v) {
    if (size_ < N) {
      std::memcpy(static_cast<void*>(inline_ + size_ * sizeof(T)), &v, sizeof(T));
      ++size_;
      return;
    }
    if (size_ == N) heap_.assign(InlineData(), InlineData() + N);
    heap_.push_back(v);
    ++size_;
  }
  T* data() { return size_ <= N ? InlineData() : heap_.data(); }
  const T* data() const { return size_ <= N ? InlineData() : heap_.data(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& back() { return data()[size_ - 1]; }
  void clear() {
    size_ = 0;
    heap_.clear();
  }

 private:
  // Raw bytes, not T[N]: constructing N elements on every declaration would cost more than
  // the vector saves. Elements are created by memcpy (T is trivially copyable).
  T* InlineData() { return std::launder(reinterpret_cast<T*>(inline_)); }
  const T* InlineData() const { return std::launder(reinterpret_cast<const T*>(inline_)); }
  alignas(T) unsigned char inline_[N * sizeof(T)];
  std::vector<T> heap_;
  size_t size_ = 0;
};

}  // namespace nhlo
