#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the inputs and numpy's results for testdata/exec/ragged_dot.hlo (needs numpy):

    /usr/bin/python3 tools/ragged-dot-expected.py   # writes testdata/tensors/ragged_dot_*.npy/.npz

ragged-dot written out here a second time, independently of the kernel, from the JAX definition
of jax.lax.ragged_dot_general: group j covers rows [start_j, start_j + size_j) of the lhs ragged
dimension (start_j = sum of the sizes before j); a non-contracting ragged row multiplies rhs
group j, a contracting ragged dimension splits the sum into one result per group, a batch one
is a plain dot. Inputs are small integers, so every sum is exact in float32 whatever its order.
The group sizes are constants in the .hlo file; they are repeated here.
"""
import numpy as np

OUT = "testdata/tensors/"
rng = np.random.RandomState(20261202)


def ints(shape):
    return rng.randint(-3, 4, shape).astype(np.float32)


def group_of(sizes, i):
    """Groups holding row i (XLA's mask: start <= i < start + size)."""
    start, hits = 0, []
    for j, s in enumerate(sizes):
        if start <= i < start + s:
            hits.append(j)
        start += s
    return hits


# 1. non-contracting, with a batch dimension and an outer free dimension (x):
#    lhs [b=2, x=3, m=6, k=4], rhs [g=3, b=2, k=4, n=5], sizes [b, x, g] -> [2, 3, 6, 5]
l1, r1 = ints((2, 3, 6, 4)), ints((3, 2, 4, 5))
s1 = np.array([[[2, 2, 2], [1, 0, 3], [6, 0, 0]],
               [[0, 0, 0], [3, 4, 1], [2, 1, 1]]])
o1 = np.zeros((2, 3, 6, 5), np.float32)
for b in range(2):
    for x in range(3):
        for i in range(6):
            for j in group_of(s1[b, x], i):
                o1[b, x, i] += l1[b, x, i] @ r1[j, b]

# 2. non-contracting, sizes [g] for every row, rows past the groups are zero:
#    lhs [m=7, k=3], rhs [g=2, k=3, n=4], sizes {3, 2} -> [7, 4]
l2, r2 = ints((7, 3)), ints((2, 3, 4))
o2 = np.zeros((7, 4), np.float32)
for i in range(7):
    for j in group_of([3, 2], i):
        o2[i] += l2[i] @ r2[j]

# 3. contracting, with a batch dimension: lhs [b=2, m=3, k=6], rhs [b=2, k=6, n=4],
#    sizes [b, g] -> [g=3, 2, 3, 4]
l3, r3 = ints((2, 3, 6)), ints((2, 6, 4))
s3 = np.array([[1, 2, 3], [4, 0, 1]])
o3 = np.zeros((3, 2, 3, 4), np.float32)
for b in range(2):
    for k in range(6):
        for j in group_of(s3[b], k):
            o3[j, b] += np.outer(l3[b, :, k], r3[b, k, :])

# 4. batch: a plain batched dot: lhs [b=4, m=3, k=2], rhs [b=4, k=2, n=5] -> [4, 3, 5]
l4, r4 = ints((4, 3, 2)), ints((4, 2, 5))
o4 = np.einsum("bmk,bkn->bmn", l4, r4).astype(np.float32)

arrays = {"l1": l1, "r1": r1, "l2": l2, "r2": r2, "l3": l3, "r3": r3, "l4": l4, "r4": r4}
for name, a in arrays.items():
    np.save(OUT + "ragged_dot_" + name + ".npy", a)
np.savez(OUT + "ragged_dot_expected.npz", o1, o2, o3, o4)
