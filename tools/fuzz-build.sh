# Sourced by tools/fuzz-parser, tools/fuzz-bundle and tools/fuzz-modules (from the checkout's
# top): `fuzz_build NAME OUT` compiles every library source once into build-fuzz-obj/ (clang,
# AddressSanitizer + UBSan, no UB recovery, libFuzzer coverage; an object is rebuilt when its
# source or a header it includes is newer, from clang's dependency file) and links
# tools/NAME.cc with them into OUT/NAME.
fuzz_build() {
  local name="$1" out="$2" objdir=build-fuzz-obj
  # Eigen (header-only) serves the GEMM, fft and the builder-library special functions.
  local flags=(-std=c++20 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -Isrc
               -isystem /usr/include/eigen3)
  mkdir -p "$objdir" "$out"
  local src obj relink=0 objs=()
  # The wider-vector elementwise spans and tap rows are built per ISA by meson only (NHLO_SPAN_X86
  # unset here: the fuzzers run the baseline loops, which give the same results).
  for src in $(find src -name '*.cc' | grep -v -e '^src/driver/.*_main\.cc$' -e '^src/interp/.*_isa\.cc$' | sort); do
    obj="$objdir/$(echo "${src#src/}" | tr / _).o"
    if [ ! -f "$obj" ] || [ ! -f "$obj.d" ] ||
       [ -n "$(find $(sed -e 's/^[^:]*://' -e 's/\\$//' "$obj.d") -newer "$obj" 2>/dev/null | head -1)" ]; then
      echo "$name: compiling $src" >&2
      # The GEMM's Eigen file is built per ISA by meson; the fuzzers take its baseline build
      # (gemm.cc then knows no other, since NHLO_GEMM_X86 is not defined here).
      local extra=()
      if [ "$src" = src/interp/gemm_eigen.cc ]; then extra=(-DNHLO_GEMM_ISA=Baseline); fi
      clang++ "${flags[@]}" "${extra[@]}" -fsanitize=fuzzer-no-link -MMD -MF "$obj.d" -c "$src" -o "$obj"
      relink=1
    fi
    objs+=("$obj")
  done
  # The custom-call expansions compiled in, which meson generates with tools/embed-files (the
  # script leaves an unchanged file untouched, so this rebuilds only when an expansion changes).
  python3 tools/embed-files "$objdir/builtin_expansions.cc" BuiltinExpansionFiles custom-calls/*.hlo
  if [ ! -f "$objdir/builtin_expansions.o" ] || [ "$objdir/builtin_expansions.cc" -nt "$objdir/builtin_expansions.o" ]; then
    clang++ "${flags[@]}" -c "$objdir/builtin_expansions.cc" -o "$objdir/builtin_expansions.o"
    relink=1
  fi
  objs+=("$objdir/builtin_expansions.o")
  # --version's text, which meson generates with vcs_tag.
  if [ ! -f "$objdir/version.o" ] || [ src/driver/version.cc.in -nt "$objdir/version.o" ]; then
    sed 's/@VCS_TAG@/fuzz/' src/driver/version.cc.in > "$objdir/version.cc"
    clang++ "${flags[@]}" -DNHLO_VERSION='"fuzz"' -c "$objdir/version.cc" -o "$objdir/version.o"
    relink=1
  fi
  objs+=("$objdir/version.o")
  if [ "$relink" = 1 ] || [ ! -x "$out/$name" ] || [ "tools/$name.cc" -nt "$out/$name" ] ||
     [ -n "$(find "${objs[@]}" -newer "$out/$name" | head -1)" ]; then
    clang++ "${flags[@]}" -Wall -Wextra -fsanitize=fuzzer "tools/$name.cc" "${objs[@]}" -lre2 -lz -o "$out/$name"
  fi
}
