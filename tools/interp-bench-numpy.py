#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# numpy on the shapes nhlo-interp-bench runs, one line per case: `name<TAB>rate` (G elements/s
# or GFLOP/s, the unit nhlo's line uses), best of 3. A measuring stick for the benchmark's
# --numpy column, never a dependency: run with OPENBLAS_NUM_THREADS=1 for one-thread figures.
# numpy has no bf16, so the bf16 dot lines are numpy's f32 figures (the yardstick).
#
# With no argument every case is measured in order. With --serve the script reads requests from
# stdin, one per line, `name<TAB>runs`, and answers each with its line (`name<TAB>-` for a case it
# does not have), the best of exactly `runs` timed runs after an untimed one: nhlo-interp-bench
# asks before each of its own rounds of the case, as many runs in each, so the two sides are
# measured seconds apart, not minutes (this VM's memory bandwidth drifts by half over a minute).
import io
import sys
import time

import numpy as np


RUNS = 0  # in --serve mode, the timed runs nhlo-interp-bench asks for (its own count); else 0


def best(f, repeat=3):
    f()
    t = 1e30
    for _ in range(RUNS or repeat):
        s = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - s)
    return t


CASES = {}  # name -> a function measuring the case and returning its rate


def emit(name, rate_fn):
    CASES[name] = rate_fn


rng = np.random.default_rng(1)
n16m = 1 << 24
x = rng.random(n16m, dtype=np.float32) * 2 - 1
y = rng.random(n16m, dtype=np.float32) * 2 - 1
z = np.empty_like(x)
for name, f in [("add f32", lambda: np.add(x, y, out=z)), ("multiply f32", lambda: np.multiply(x, y, out=z)),
                ("exp f32", lambda: np.exp(x, out=z)), ("tanh f32", lambda: np.tanh(x, out=z))]:
    emit(name, lambda f=f: n16m / best(f) / 1e9)
for size, label in ((1 << 16, "64K"), (1 << 18, "256K"), (1 << 20, "1M")):
    xs, ys, zs = x[:size].copy(), y[:size].copy(), z[:size].copy()
    for name, op in [("add", np.add), ("multiply", np.multiply)]:
        emit(f"{name} f32 {label}",
             lambda op=op, xs=xs, ys=ys, zs=zs, size=size: size / best(lambda: op(xs, ys, out=zs), repeat=20) / 1e9)
# The chains, numpy's best form of them: each op writes into one of two preallocated arrays
# (out=), so no allocation is timed.
for name, size, length, ops in (("chain64 f32 256K", 1 << 18, 64, (np.add, np.multiply, np.subtract, np.maximum)),
                                ("chain32 add f32 4M", 1 << 22, 32, (np.add,))):
    xs, ys = x[:size].copy(), y[:size].copy()
    bufs = (np.empty_like(xs), np.empty_like(xs))

    def chain(xs=xs, ys=ys, bufs=bufs, length=length, ops=ops):
        prev = xs
        for i in range(length):
            ops[i % len(ops)](prev, ys, out=bufs[i % 2])
            prev = bufs[i % 2]

    emit(name, lambda chain=chain, work=size * length: work / best(chain, repeat=10) / 1e9)
# The pre-LN transformer block of nhlo-interp-bench's TransformerBlockHlo, op for op.


def transformer(x, wqkv, wo, w1, w2, g1, b1, g2, b2, layers=4):
    def layer_norm(v, g, b):
        c = v - v.sum(axis=1, keepdims=True) * np.float32(1 / 512)
        r = 1 / np.sqrt((c * c).sum(axis=1, keepdims=True) * np.float32(1 / 512) + np.float32(1e-5))
        return c * r * g + b

    for _ in range(layers):
        qkv = layer_norm(x, g1, b1) @ wqkv
        q, k, v = (qkv[:, 512 * i:512 * (i + 1)].reshape(256, 8, 64).transpose(1, 0, 2) for i in range(3))
        s = (q @ k.transpose(0, 2, 1)) * np.float32(0.125)
        e = np.exp(s - s.max(axis=2, keepdims=True))
        p = e / e.sum(axis=2, keepdims=True)
        x1 = x + (p @ v).transpose(1, 0, 2).reshape(256, 512) @ wo
        h = layer_norm(x1, g2, b2) @ w1
        gelu = h * np.float32(0.5) * (1 + np.tanh((h + h * h * h * np.float32(0.044715)) * np.float32(0.7978845608)))
        x = x1 + gelu @ w2
    return x


tw = [rng.random(shape, dtype=np.float32) * 2 - 1 for shape in ((256, 512), (512, 1536), (512, 512), (512, 2048),
                                                                 (2048, 512), (512,), (512,), (512,), (512,))]
per_layer = 2 * 256 * 512 * 1536 + 2 * 2 * 8 * 256 * 256 * 64 + 2 * 256 * 512 * 512 + 2 * 2 * 256 * 512 * 2048
emit("transformer block f32", lambda: 4 * per_layer / best(lambda: transformer(*tw), repeat=5) / 1e9)
n4m = 1 << 22
x4, y4, z4 = x[:n4m].copy(), y[:n4m].copy(), z[:n4m].copy()
for name, op in [("add", np.add), ("multiply", np.multiply)]:
    emit(f"{name} f32 4M", lambda op=op: n4m / best(lambda: op(x4, y4, out=z4), repeat=10) / 1e9)
for n in (256, 512, 1024):
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)

    def dot_rate(a=a, b=b, n=n):
        return 2 * n ** 3 / best(lambda: a @ b) / 1e9

    emit(f"dot f32 {n}", dot_rate)
    emit(f"dot bf16 {n}", dot_rate)
# batch norm over NCHW, feature axis 1: the same steps as XLA's expansion, in numpy's own sums.
bx = rng.random((32, 144, 56, 56), dtype=np.float32) * 2 - 1
bg = rng.random((32, 144, 56, 56), dtype=np.float32) * 2 - 1
bs, bo = np.ones((144, 1, 1), np.float32), np.zeros((144, 1, 1), np.float32)
bout = np.empty_like(bx)


def bn_training():
    mean = bx.mean(axis=(0, 2, 3), keepdims=True)
    var = np.square(bx).mean(axis=(0, 2, 3), keepdims=True) - mean * mean
    inv = 1 / np.sqrt(var + np.float32(1e-5))
    np.add((bx - mean) * inv * bs, bo, out=bout)


# The mean and variance are operands of batch-norm-grad, computed once outside the timing.
bmean = bx.mean(axis=(0, 2, 3), keepdims=True)
bvar = np.square(bx).mean(axis=(0, 2, 3), keepdims=True) - bmean * bmean


def bn_grad():
    mean = bmean
    var_eps = bvar + np.float32(1e-5)
    centered = bx - mean
    sum_gy = bg.sum(axis=(0, 2, 3), keepdims=True)
    sum_gy_xm = (bg * centered).sum(axis=(0, 2, 3), keepdims=True)
    count = np.float32(bx.size / 144)
    np.multiply(bs / np.sqrt(var_eps) / count, (bg * count - sum_gy) - sum_gy_xm * centered / var_eps, out=bout)


emit("batch-norm-training f32", lambda: bx.size / best(bn_training) / 1e9)
emit("batch-norm-grad f32", lambda: bx.size / best(bn_grad) / 1e9)
m = rng.random((4096, 4096), dtype=np.float32)
emit("reduce rows f32", lambda: m.size / best(lambda: m.sum(axis=1)) / 1e9)
emit("reduce cols f32", lambda: m.size / best(lambda: m.sum(axis=0)) / 1e9)
o = np.empty_like(m)
emit("transpose f32", lambda: m.size / best(lambda: np.copyto(o, m.T)) / 1e9)
n1m = 1 << 20
v = rng.random(n1m, dtype=np.float32)
emit("sort f32", lambda: n1m / best(lambda: np.sort(v)) / 1e9)
idx = rng.integers(0, n1m, n1m)
emit("gather f32", lambda: n1m / best(lambda: np.take(v, idx)) / 1e9)
acc = np.zeros(n1m, dtype=np.float32)
emit("scatter-add f32", lambda: n1m / best(lambda: np.add.at(acc, idx, v)) / 1e9)
emit("random-args f32", lambda: n16m / best(lambda: rng.random(n16m, dtype=np.float32)) / 1e9)
# nhlo's summary line: min, max, mean, NaN and Inf counts, first elements.
emit("print summary f32", lambda: n16m / best(lambda: (x.min(), x.max(), x.mean(), np.isnan(x).sum(),
                                                     np.isinf(x).sum(), repr(x[:8]))) / 1e9)
emit("write npy f32", lambda: n16m / best(lambda: np.save(io.BytesIO(), x)) / 1e9)
# numpy's full repr slows as arrays grow (about 25K elements/s on 64K, 5K on 1M, where it took
# minutes): 64K keeps each run to seconds (in --serve mode the row takes as many runs as nhlo's
# does, --repeat of them), and favours numpy.
n64k = 1 << 16
small = x[:n64k]


def print_all_rate():
    with np.printoptions(threshold=n64k + 1):
        return n64k / best(lambda: repr(small), repeat=1) / 1e9


emit("print all f32", print_all_rate)


def answer(name):
    rate = CASES.get(name)
    print(f"{name}\t{rate():.6f}" if rate else f"{name}\t-", flush=True)


if "--serve" in sys.argv[1:]:
    for request in sys.stdin:
        name, _, runs = request.rstrip("\n").partition("\t")
        RUNS = int(runs) if runs.isdigit() and int(runs) > 0 else 1
        answer(name)
else:
    for case in CASES:
        answer(case)
