#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the inputs and numpy's results for testdata/exec/fft.hlo (needs numpy):

    /usr/bin/python3 tools/fft-expected.py      # writes testdata/tensors/fft_*.npy/.npz

numpy.fft computes in double precision; the results are rounded once to complex64/float32,
which is what nhlo's fft kernel gives too (docs/interpreter.md). The inputs are fixed (a seeded
generator, values rounded to 1/16), so the files are the same on every run.
"""
import numpy as np

OUT = "testdata/tensors/"
rng = np.random.RandomState(20261201)
x = (np.round(rng.uniform(-4, 4, (2, 3, 4)) * 16) / 16 + 1j * np.round(rng.uniform(-4, 4, (2, 3, 4)) * 16) / 16)
x = x.astype(np.complex64)
r = (np.round(rng.uniform(-4, 4, (2, 3, 5)) * 16) / 16).astype(np.float32)
xd = x.astype(np.complex128)
results = [
    np.fft.fft(xd, axis=-1).astype(np.complex64),                          # FFT, fft_length={4}
    np.fft.ifftn(xd, axes=(-2, -1)).astype(np.complex64),                  # IFFT, {3,4}
    np.fft.fftn(xd, axes=(0, 1, 2)).astype(np.complex64),                  # FFT, {2,3,4}
    np.fft.rfftn(r.astype(np.float64), axes=(-2, -1)).astype(np.complex64),  # RFFT, {3,5}
    np.fft.irfftn(xd, s=(3, 6), axes=(-2, -1)).astype(np.float32),         # IRFFT, {3,6}
]
np.save(OUT + "fft_x.npy", x)
np.save(OUT + "fft_r.npy", r)
np.savez(OUT + "fft_expected.npz", *results)
