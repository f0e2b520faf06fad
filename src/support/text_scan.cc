// SPDX-License-Identifier: Apache-2.0
#include "support/text_scan.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace nhlo {

size_t FindEither(const char* s, size_t i, size_t n, char a, char b) {
#if defined(__SSE2__)
  const __m128i va = _mm_set1_epi8(a), vb = _mm_set1_epi8(b);
  for (; i + 16 <= n; i += 16) {
    __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    int hits = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(chunk, va), _mm_cmpeq_epi8(chunk, vb)));
    if (hits) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(hits)));
  }
#endif
  for (; i < n; ++i)
    if (s[i] == a || s[i] == b) return i;
  return n;
}

size_t FindNotPlain(const char* s, size_t i, size_t n) {
#if defined(__SSE2__)
  // c + 1 as a signed byte is below ' ' + 1 exactly for the control characters, DEL and
  // everything from 0x80 up: one compare for all of them.
  const __m128i one = _mm_set1_epi8(1), first_plain = _mm_set1_epi8(' ' + 1), dquote = _mm_set1_epi8('"'),
                squote = _mm_set1_epi8('\''), backslash = _mm_set1_epi8('\\');
  auto hits = [&](size_t at) {
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + at));
    __m128i unprintable = _mm_cmplt_epi8(_mm_add_epi8(c, one), first_plain);
    __m128i hit = _mm_or_si128(_mm_or_si128(unprintable, _mm_cmpeq_epi8(c, dquote)),
                               _mm_or_si128(_mm_cmpeq_epi8(c, squote), _mm_cmpeq_epi8(c, backslash)));
    return static_cast<unsigned>(_mm_movemask_epi8(hit));
  };
  if (i + 16 <= n) {
    for (; i + 16 <= n; i += 16)
      if (unsigned h = hits(i)) return i + static_cast<size_t>(__builtin_ctz(h));
    // The tail as the last sixteen bytes, overlapping what was read: short tails are common
    // (every string is one).
    if (i < n) {
      unsigned h = hits(n - 16) >> (16 - (n - i));
      return h ? i + static_cast<size_t>(__builtin_ctz(h)) : n;
    }
    return n;
  }
#endif
  while (i < n && !IsNotPlain(s[i])) ++i;
  return i;
}

RawBlockScan ScanRawBraceBlock(std::string_view text, size_t start) {
  // Locals instead of the string_view in the loop: metadata blocks are a large share of a dump.
  const char* s = text.data();
  const size_t n = text.size();
  size_t pos = start;
  int depth = 0;
  bool fold = false;
  while (pos < n) {
    char c = s[pos++];
    if (!IsRawSpecial(c)) continue;
    if (c == ' ') {
      fold |= pos < n && s[pos] == ' ';
    } else if (c == '\n' || c == '\t' || c == '\r') {
      fold = true;
    } else if (c == '"' || c == '\'') {
      for (;;) {
        pos = FindEither(s, pos, n, c, '\\');
        if (pos >= n || s[pos] == c) break;
        pos += pos + 1 < n ? 2 : 1;  // an escape: skip the escaped character
      }
      if (pos >= n) break;
      ++pos;
    } else if (c == '/' && pos < n && s[pos] == '/') {
      fold = true;
      while (pos < n && s[pos] != '\n' && s[pos] != '\r') ++pos;
    } else if (c == '/' && pos < n && s[pos] == '*') {
      fold = true;
      size_t end = text.find("*/", pos + 1);
      if (end == std::string_view::npos) break;
      pos = end + 2;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) return RawBlockScan{true, pos, fold};
    }
  }
  return RawBlockScan{};
}

bool IsVerbatimRawBlock(std::string_view text) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return false;
  if (text.find('\0') != std::string_view::npos) return false;
  RawBlockScan scan = ScanRawBraceBlock(text, 0);
  return scan.ok && scan.end == text.size() && !scan.needs_fold;
}

bool IsHloKeyword(std::string_view w) {
  // Every keyword is at least 3 characters and starts with one of these letters; most
  // identifiers (instruction names, opcodes) are rejected by the first test.
  if (w.size() < 3) return false;
  switch (w[0]) {
    case 'H': return w == "HloModule";
    case 'E': return w == "ENTRY";
    case 'R': return w == "ROOT";
    case 't': return w == "true";
    case 'f': return w == "false";
    case 'i': return w == "inf";
    case 'm': return w == "maximal" || w == "manual";
    case 'r': return w == "replicated";
    case 'u': return w == "unknown" || w == "unreduced";
    case 'l': return w == "last_tile_dim_replicate";
    case 's': return w == "shard_as" || w == "shard_like";
    case 'F': return w == "FileNames" || w == "FunctionNames" || w == "FileLocations";
    case 'S': return w == "StackFrames";
    default: return false;
  }
}

bool ScansAsOneIdentifier(std::string_view text) {
  if (text.empty() || !IsIdentStart(text[0]) || text == "nan") return false;
  for (char c : text)
    if (!IsIdentChar(c)) return false;
  return true;
}

}  // namespace nhlo
