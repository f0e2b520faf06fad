#!/usr/bin/python3
"""Expected per-device results of spmd_2x4.hlo, computed from docs/multi-device-semantics.md.

Run:  /usr/bin/python3 tools/spmd-2x4-expected.py            -> one line per device (8 lines)
      /usr/bin/python3 tools/spmd-2x4-expected.py --single   -> the result of spmd_2x4_single.hlo
      /usr/bin/python3 tools/spmd-2x4-expected.py --selftest -> checks the helpers on the worked
                                                 examples of docs/multi-device-semantics.md

Inputs (deterministic): device d (d = replica * num_partitions + partition) gets
    x_d = np.arange(8, dtype=f32).reshape(4, 2) + 100 * d
The single-device module takes the stacked input xs = stack(x_0 .. x_7), f32[8,4,2].

Output line format: `device N (replica R, partition P): <shape> <literal>`, the tuple printed
the way nhlo-run prints a tuple result (docs/cli.md: `(f32[2], s32[]) ({1, 2}, 3)`; rank-2
literals as `{ {1, 2}, {8, 10} }`, seen in tests/test_parser.cc).  Every value in this
test is an integer-valued float, so the sums are exact in any order.
"""
import sys
import numpy as np

R, P = 2, 4            # replica_count, num_partitions
D = R * P              # devices; d = r * P + p  (docs/multi-device-semantics.md section 1)


def rp(d):
    return divmod(d, P)            # (replica, partition)


def dev(r, p):
    return r * P + p


# ---------------------------------------------------------------- groups (section 2, 3)
def iota_groups(G, S, reshape_dims, perm=None):
    """`[G,S]<=[reshape_dims]T(perm)`: arange, reshape, transpose, rows of S."""
    a = np.arange(int(np.prod(reshape_dims))).reshape(reshape_dims)
    if perm is not None:
        a = a.transpose(perm)
    assert a.size == G * S
    return a.reshape(G, S).tolist()


def group_mode(has_channel_id, use_global_device_ids):
    """use_global_device_ids: None for ops that do not carry the attribute
    (all-to-all, ragged-all-to-all, collective-permute, collective-broadcast);
    False/True for all-reduce, all-gather, reduce-scatter (absent = False)."""
    if not has_channel_id:
        if use_global_device_ids:
            raise ValueError("use_global_device_ids=true needs a channel_id")
        return "cross_replica"
    if use_global_device_ids is None:
        return "cross_partition"
    return "flattened_id" if use_global_device_ids else "cross_replica_and_partition"


def device_groups(mode, replica_groups):
    """All participant groups as lists of device ids, each in rank order."""
    groups = [list(g) for g in replica_groups]
    if not groups:
        if mode == "flattened_id":
            raise ValueError("flattened-id mode needs explicit replica_groups")
        groups = [list(range(P if mode == "cross_partition" else R))]
    out = []
    if mode == "cross_replica":
        for g in groups:
            for p in range(P):
                out.append([dev(r, p) for r in g])
    elif mode == "cross_partition":
        for g in groups:
            for r in range(R):
                out.append([dev(r, p) for p in g])
    elif mode == "cross_replica_and_partition":   # XLA order: replica-major
        for g in groups:
            out.append([dev(r, p) for r in g for p in range(P)])
    elif mode == "flattened_id":
        out = groups
    else:
        raise ValueError(mode)
    seen = sorted(d for g in out for d in g)
    assert seen == list(range(D)), ("groups must cover every device once", out)
    return out


def group_of(groups, d):
    (g,) = [g for g in groups if d in g]
    return g


# ---------------------------------------------------------------- collectives (section 4)
def all_reduce(xs, groups, fn=np.add):
    res = [None] * D
    for g in groups:
        acc = xs[g[0]].copy()
        for d in g[1:]:                      # left fold in rank order
            acc = fn(acc, xs[d])
        for d in g:
            res[d] = acc.copy()
    return res


def all_gather(xs, groups, dim):
    res = [None] * D
    for g in groups:
        cat = np.concatenate([xs[d] for d in g], axis=dim)
        for d in g:
            res[d] = cat.copy()
    return res


def reduce_scatter(xs, groups, dim, fn=np.add):
    red = all_reduce(xs, groups, fn)
    res = [None] * D
    for g in groups:
        parts = np.split(red[g[0]], len(g), axis=dim)
        for rank, d in enumerate(g):
            res[d] = parts[rank]
    return res


def all_to_all(xs, groups, dim):
    """Array form (`dimensions={dim}`): split and concat dimension are both dim."""
    res = [None] * D
    for g in groups:
        n = len(g)
        chunks = {d: np.split(xs[d], n, axis=dim) for d in g}
        for i, d in enumerate(g):
            res[d] = np.concatenate([chunks[s][i] for s in g], axis=dim)
    return res


def all_to_all_tuple(xss, groups):
    """Tuple form (no `dimensions`): xss[d] is a list of len(group) operands.
    Element j of device i's result is operand i of the device at rank j."""
    res = [None] * D
    for g in groups:
        for i, d in enumerate(g):
            res[d] = [xss[s][i].copy() for s in g]
    return res


def collective_permute(xs, pairs, has_channel_id):
    """Pairs hold partition ids (channel_id: inside each replica) or replica ids (no
    channel_id: inside each partition). Devices no pair targets get zeros."""
    res = [np.zeros_like(x) for x in xs]
    for src, dst in pairs:
        if has_channel_id:
            for r in range(R):
                res[dev(r, dst)] = xs[dev(r, src)].copy()
        else:
            for p in range(P):
                res[dev(dst, p)] = xs[dev(src, p)].copy()
    return res


def collective_broadcast(xs, groups):
    res = [np.zeros_like(x) for x in xs]
    for g in groups:
        for d in g:
            res[d] = xs[g[0]].copy()
    return res


def ragged_all_to_all(inp, out, in_off, send_sz, out_off, recv_sz, groups):
    """Rank-1 offsets/sizes, ragged (leading) dimension 0 (docs/multi-device-semantics.md 4.7)."""
    res = [o.copy() if o is not None else None for o in out]
    for g in groups:
        n = len(g)
        for j, s in enumerate(g):                  # sender s at rank j
            k = len(in_off[s])
            per = k // n
            assert per * n == k
            for i in range(k):
                dst_rank, slot = divmod(i, per)
                t = g[dst_rank]
                size = int(send_sz[s][i])
                # the receiver's recv_sizes entry for this slice must agree
                assert int(recv_sz[t][j * per + slot]) == size, "send/recv sizes disagree"
                src0, dst0 = int(in_off[s][i]), int(out_off[s][i])
                res[t][dst0:dst0 + size] = inp[s][src0:src0 + size]
    return res


# ---------------------------------------------------------------- the 2x4 module
def inputs():
    return [np.arange(8, dtype=np.float32).reshape(4, 2) + np.float32(100 * d) for d in range(D)]


def spmd_2x4(xs):
    """Mirror of spmd_2x4.hlo, instruction by instruction."""
    out = {}
    g = device_groups(group_mode(True, True), iota_groups(2, 4, [8]))
    out["all-reduce"] = all_reduce(xs, g)
    g = device_groups(group_mode(False, False), [[0, 1]])
    out["all-gather"] = all_gather(xs, g, 1)
    g = device_groups(group_mode(True, True), [[3, 2, 1, 0], [7, 6, 5, 4]])
    out["reduce-scatter"] = reduce_scatter(xs, g, 0)
    g = device_groups(group_mode(True, None), iota_groups(2, 2, [2, 2], (1, 0)))
    out["all-to-all"] = all_to_all(xs, g, 0)
    out["collective-permute"] = collective_permute(xs, [(0, 1), (1, 2), (2, 3)], True)
    out["collective-permute.1"] = collective_permute(xs, [(0, 1), (1, 0)], False)
    g = device_groups(group_mode(True, False), [[0, 1]])
    out["all-gather.1"] = all_gather(xs, g, 0)
    out["partition-id"] = [np.uint32(rp(d)[1]) for d in range(D)]
    out["replica-id"] = [np.uint32(rp(d)[0]) for d in range(D)]
    return out


ORDER = ["all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
         "collective-permute.1", "all-gather.1", "partition-id", "replica-id"]


def spmd_2x4_single(xs_stacked):
    """Mirror of spmd_2x4_single.hlo (numpy ops standing for the HLO ops)."""
    xs = xs_stacked
    r4 = xs.reshape(2, 4, 4, 2)                                   # [r, p, row, col]
    sum_p = r4.sum(axis=1)                                        # reduce dims={1}
    ar = np.broadcast_to(sum_p[:, None], (2, 4, 4, 2)).reshape(8, 4, 2)
    t = r4.transpose(1, 2, 0, 3).reshape(4, 4, 4)                 # [p, row, r*2+col]
    ag = np.broadcast_to(t[None], (2, 4, 4, 4)).reshape(8, 4, 4)
    rs = sum_p[:, ::-1, :].reshape(8, 1, 2)                       # reverse dims={1}
    a2a = xs.reshape(2, 2, 2, 2, 2, 2).transpose(0, 3, 2, 1, 4, 5).reshape(8, 4, 2)
    first3 = r4[:, 0:3]
    cp = np.concatenate([np.zeros((2, 1, 4, 2), np.float32), first3], axis=1).reshape(8, 4, 2)
    cp1 = r4[::-1].reshape(8, 4, 2)                               # reverse dims={0}
    ag1 = np.broadcast_to(xs.reshape(32, 2)[None], (8, 32, 2))
    pid = np.broadcast_to(np.arange(4, dtype=np.uint32)[None], (2, 4)).reshape(8)
    rid = np.broadcast_to(np.arange(2, dtype=np.uint32)[:, None], (2, 4)).reshape(8)
    return [ar, ag, rs, a2a, cp, cp1, ag1, pid, rid]


# ---------------------------------------------------------------- printing
def fmt_num(v):
    v = v.item() if hasattr(v, "item") else v
    if isinstance(v, float):
        if v == int(v):
            return str(int(v))
        return repr(float(np.float32(v)))
    return str(v)


def fmt_lit(a):
    a = np.asarray(a)
    if a.ndim == 0:
        return fmt_num(a)
    if a.ndim == 1:
        return "{" + ", ".join(fmt_num(v) for v in a) + "}"
    return "{ " + ", ".join(fmt_lit(s) for s in a) + " }"


def fmt_shape(a):
    a = np.asarray(a)
    ty = {np.dtype(np.float32): "f32", np.dtype(np.uint32): "u32"}[a.dtype]
    return f"{ty}[{','.join(str(n) for n in a.shape)}]"


def fmt_tuple(vals):
    return "(" + ", ".join(fmt_shape(v) for v in vals) + ") (" + ", ".join(fmt_lit(v) for v in vals) + ")"


# ---------------------------------------------------------------- self test (docs/multi-device-semantics.md examples)
def selftest():
    assert iota_groups(2, 4, [8]) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert iota_groups(4, 2, [2, 4], (1, 0)) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert iota_groups(2, 4, [2, 2, 2], (0, 2, 1)) == [[0, 2, 1, 3], [4, 6, 5, 7]]
    assert sum(iota_groups(4, 4, [4, 2, 2], (1, 0, 2)), []) == \
        [0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15]   # tile_assignment.h example
    # group modes for R=2, P=4
    assert device_groups("cross_replica", [[0, 1]]) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert device_groups("cross_partition", [[0, 1], [2, 3]]) == [[0, 1], [4, 5], [2, 3], [6, 7]]
    assert device_groups("cross_replica_and_partition", [[0, 1]]) == [list(range(8))]
    assert device_groups("cross_replica", []) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert device_groups("cross_partition", []) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    # ragged-all-to-all: the example of jax.lax.ragged_all_to_all's docstring, run on
    # devices {0,1} of a one-group split (other devices idle with empty slices).
    global R, P, D
    saved = (R, P, D)
    R, P, D = 1, 2, 2
    inp = [np.array([1, 2, 2]), np.array([3, 4, 0])]
    out = [np.zeros(4, int), np.zeros(4, int)]
    res = ragged_all_to_all(inp, out,
                            [[0, 1], [0, 1]], [[1, 2], [1, 1]],
                            [[0, 0], [1, 2]], [[1, 1], [2, 1]], [[0, 1]])
    assert res[0].tolist() == [1, 3, 0, 0] and res[1].tolist() == [2, 2, 4, 0], res
    R, P, D = saved
    # the multi-device mirror equals the single-device mirror
    xs = inputs()
    multi = spmd_2x4(xs)
    single = spmd_2x4_single(np.stack(xs))
    for k, name in enumerate(ORDER):
        for d in range(D):
            assert np.array_equal(np.asarray(multi[name][d]), single[k][d]), (name, d)
    print("selftest ok")


def main():
    if "--selftest" in sys.argv:
        selftest()
        return
    xs = inputs()
    if "--single" in sys.argv:
        print(fmt_tuple(spmd_2x4_single(np.stack(xs))))
        return
    res = spmd_2x4(xs)
    for d in range(D):
        r, p = rp(d)
        print(f"device {d} (replica {r}, partition {p}): " + fmt_tuple([res[name][d] for name in ORDER]))


if __name__ == "__main__":
    main()
