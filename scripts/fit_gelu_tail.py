#!/usr/bin/env python3
"""Fits the polynomial that src/kernels/cpu/gelu.cpp uses for the normal distribution's tail,
and prints it as C++ constants (standard library only; run it to check or regenerate them).

GELU needs Phi(x) and phi(x). With z = |x| / sqrt(2), the lower tail is
    Phi(-|x|) = erfc(z) / 2 = t Q(t) exp(-z^2) / 2,    t = 1 / (1 + z / 2),
where Q(t) = erfc(z) exp(z^2) / t is smooth on the t of z in [0, 9] (z = 9 is where the
kernel stops: erfc(9) = 4e-37). phi(x) = exp(-z^2) / sqrt(2 pi) shares the exp, so GELU and
its slope cost one exp. Q is interpolated at Chebyshev nodes (near-minimax), then written
in powers of s = t - centre (the middle of the range), which keeps float32 Horner
evaluation from cancelling; the script reports the worst relative error of that float32
evaluation against Q in double (math.erfc).

    python3 scripts/fit_gelu_tail.py            # degree 8, as the kernel has it
    python3 scripts/fit_gelu_tail.py --degree 10
"""
import argparse
import math
import struct

import script_io

T_MIN, T_MAX = 1.0 / (1.0 + 9.0 / 2.0), 1.0
CENTRE = (T_MIN + T_MAX) / 2


def q_exact(t):
    z = 2.0 * (1.0 / t - 1.0)
    return math.erfc(z) * math.exp(z * z) / t


def chebyshev_interpolant(degree):
    """Coefficients of Q's interpolant in powers of t."""
    n = degree + 1
    half, mid = (T_MAX - T_MIN) / 2, (T_MAX + T_MIN) / 2
    values = [q_exact(mid + half * math.cos(math.pi * (k + 0.5) / n)) for k in range(n)]
    cheb = [2.0 / n * sum(values[k] * math.cos(math.pi * j * (k + 0.5) / n) for k in range(n)) for j in range(n)]
    cheb[0] /= 2
    # T_j(u) in powers of u, u = (t - mid) / half.
    basis = [[1.0], [0.0, 1.0]]
    for j in range(2, n):
        nxt = [0.0] * (j + 1)
        for i, v in enumerate(basis[j - 1]):
            nxt[i + 1] += 2 * v
        for i, v in enumerate(basis[j - 2]):
            nxt[i] -= v
        basis.append(nxt)
    in_u = [0.0] * n
    for j in range(n):
        for i, v in enumerate(basis[j]):
            in_u[i] += cheb[j] * v
    # Powers of u = (s + CENTRE - mid) / half; CENTRE == mid, so u = s / half.
    return [c / half ** i for i, c in enumerate(in_u)]


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def horner_f32(coefficients, s):
    p = f32(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        p = f32(f32(p * s) + f32(c))
    return p


def main():
    parser = script_io.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # Degree 30 is far past float32's use (each degree costs the kernel a multiply-add) and
    # keeps the fit's time and memory small; a degree outside [1, 30] is a usage error.
    parser.add_argument("--degree", type=script_io.int_in(1, 30), default=8,
                        help="degree of the tail polynomial, 1 to 30 (default 8)")
    args = parser.parse_args()
    coefficients = chebyshev_interpolant(args.degree)
    samples = [T_MIN + (T_MAX - T_MIN) * i / 100000 for i in range(100001)]
    worst = max(abs(horner_f32(coefficients, f32(t) - f32(CENTRE)) / q_exact(f32(t)) - 1) for t in samples)
    print(f"// Q(t) = sum_i c_i (t - {CENTRE:.9g})^i, degree {args.degree}: float32 Horner within "
          f"{worst:.2e} of Q (relative)")
    print(f"constexpr float kTailCentre = {CENTRE:.9e}f;")
    print("constexpr float kTail[] = {" + ", ".join(f"{c:.9e}f" for c in coefficients) + "};")


if __name__ == "__main__":
    script_io.run_main("fit_gelu_tail", main)
