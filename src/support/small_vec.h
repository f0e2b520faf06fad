// SPDX-License-Identifier: Apache-2.0
// A vector that keeps its first N elements inline: the parser collects dims, operands and
// attributes into these before copying them to the arena, so the common case never mallocs.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

namespace nhlo {

template <typename T, size_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVec moves elements bytewise");

 public:
  SmallVec() = default;
  SmallVec(const SmallVec& other) { *this = other; }
  SmallVec& operator=(const SmallVec& other) {
    if (this == &other) return *this;
    clear();
    for (const T& v : other) push_back(v);
    return *this;
  }

  void push_back(const T& v) {
    if (size_ < N) {
      inline_[size_++] = v;
      return;
    }
    if (size_ == N) heap_.assign(inline_, inline_ + N);
    heap_.push_back(v);
    ++size_;
  }
  T* data() { return size_ <= N ? inline_ : heap_.data(); }
  const T* data() const { return size_ <= N ? inline_ : heap_.data(); }
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
  T inline_[N];
  std::vector<T> heap_;
  size_t size_ = 0;
};

}  // namespace nhlo
