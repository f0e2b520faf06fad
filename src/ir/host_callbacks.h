// SPDX-License-Identifier: Apache-2.0
// JAX's Python host callbacks (jax.debug.print, jax.debug.callback, io_callback without results):
//   xla_python_cpu_callback, xla_python_gpu_callback          (api_version 2, a u64 descriptor first)
//   xla_ffi_python_cpu_callback, xla_ffi_python_gpu_callback  (typed FFI, an `index` attribute)
// nhlo runs no Python. A callback whose results are only tokens and empty tuples computes nothing
// the program reads, so it expands to those results (after-all for each token) and its side effect
// is skipped; the driver warns that it was (docs/custom-calls.md, "JAX's host callbacks"). A
// callback that returns arrays (jax.pure_callback) is refused: its values come from Python.
#pragma once

#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

class ExpansionBuilder;

/// Refuses a callback with an array among its results; its expansion's root is built into `x`.
Status CheckHostCallback(const Instruction& call);
Result<Instruction*> BuildHostCallback(ExpansionBuilder& x, const Instruction& call);

}  // namespace nhlo
