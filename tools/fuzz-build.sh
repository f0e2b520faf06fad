# Sourced by tools/fuzz-parser, tools/fuzz-bundle and tools/fuzz-modules (from the checkout's
# top): `fuzz_build NAME OUT` compiles every library source once into build-fuzz-obj/ (clang,
# AddressSanitizer + UBSan, no UB recovery, libFuzzer coverage; an object is rebuilt when its
# source or any header is newer) and links tools/NAME.cc with them into OUT/NAME.
fuzz_build() {
  local name="$1" out="$2" objdir=build-fuzz-obj
  local flags=(-std=c++20 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -Isrc)
  mkdir -p "$objdir" "$out"
  local newest_header src obj relink=0 objs=()
  newest_header=$(find src -name '*.h' -o -name '*.def' | xargs ls -t | head -1)
  for src in $(find src -name '*.cc' | grep -v '^src/driver/.*_main\.cc$' | sort); do
    obj="$objdir/$(echo "${src#src/}" | tr / _).o"
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ "$newest_header" -nt "$obj" ]; then
      echo "$name: compiling $src" >&2
      clang++ "${flags[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
      relink=1
    fi
    objs+=("$obj")
  done
  if [ "$relink" = 1 ] || [ ! -x "$out/$name" ] || [ "tools/$name.cc" -nt "$out/$name" ]; then
    clang++ "${flags[@]}" -Wall -Wextra -fsanitize=fuzzer "tools/$name.cc" "${objs[@]}" -lre2 -o "$out/$name"
  fi
}
