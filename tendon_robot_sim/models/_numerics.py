# Copyright 2026 tendon_robot_sim maintainers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
Small numba kernels shared by the models' compiled solvers.

3-vector and 3x3 algebra, a dense linear solve and Newton helpers (norms, Broyden's
update).

Everything runs in nopython mode with ``error_model='numpy'``: a division by zero gives
inf/NaN (caught by the callers' finiteness checks) instead of compiling exception-raising
branches into every division.
"""

import math
import sys

from numba import njit


def _numba_numpy_support_without_scipy() -> None:
    """
    Load numba's numpy support without scipy.linalg, which numba takes 0.17 s to import for it.

    Before it loads (or compiles) its first kernel, numba imports its numpy implementations,
    and ``numba.np.arraymath`` imports scipy.linalg on the way only to see whether BLAS is
    there, for np.correlate and np.convolve (which no kernel here uses; they fall back to a
    plain loop). Loading that module while scipy.linalg.cython_blas cannot be imported keeps
    scipy out of a process that needs none of it: about a sixth of a ``simulate`` run of
    Till's example. Everything else of numba's that uses BLAS or LAPACK (np.dot, np.linalg)
    imports scipy itself when a kernel using it is compiled.
    """
    blas = 'scipy.linalg.cython_blas'
    if 'numba.np.arraymath' in sys.modules or 'scipy.linalg' in sys.modules:
        return
    sys.modules[blas] = None        # import raises ImportError, without importing scipy
    try:
        import numba.np.arraymath   # noqa: F401
    finally:
        del sys.modules[blas]


_numba_numpy_support_without_scipy()
kernel = njit(cache=True, error_model='numpy')


@kernel
def cross(a, b, out):
    """Set out = a x b (out may alias a or b)."""
    a0, a1, a2 = a[0], a[1], a[2]
    b0, b1, b2 = b[0], b[1], b[2]
    out[0] = a1 * b2 - a2 * b1
    out[1] = a2 * b0 - a0 * b2
    out[2] = a0 * b1 - a1 * b0


@kernel
def _pivot(A, c, n):
    """Row of the largest |A[r, c]|, c <= r < n (partial pivoting); -1 if A is singular there."""
    piv = c
    big = abs(A[c, c])
    for r in range(c + 1, n):
        if abs(A[r, c]) > big:
            big = abs(A[r, c])
            piv = r
    if not big > 0.0 or not math.isfinite(big):
        return -1
    return piv


@kernel
def gauss_solve(A, b):
    """
    Solve A x = b (n = b.size) by Gaussian elimination with partial pivoting.

    A is overwritten and x is returned in b. False if A is singular.
    """
    n = b.size
    for c in range(n):
        piv = _pivot(A, c, n)
        if piv < 0:
            return False
        if piv != c:
            for k in range(c, n):
                A[c, k], A[piv, k] = A[piv, k], A[c, k]
            b[c], b[piv] = b[piv], b[c]
        inv = 1.0 / A[c, c]
        for r in range(c + 1, n):
            f = A[r, c] * inv
            if f != 0.0:
                for k in range(c + 1, n):
                    A[r, k] -= f * A[c, k]
                b[r] -= f * b[c]
    for c in range(n - 1, -1, -1):
        acc = b[c]
        for k in range(c + 1, n):
            acc -= A[c, k] * b[k]
        b[c] = acc / A[c, c]
    return True


@kernel
def invert(A, W):
    """
    Replace A (n, n) by its inverse (Gauss-Jordan, partial pivoting); W (n, n) is scratch.

    False if A is singular (A is then garbage).
    """
    n = A.shape[0]
    for r in range(n):
        for c in range(n):
            W[r, c] = 1.0 if r == c else 0.0
    for c in range(n):
        piv = _pivot(A, c, n)
        if piv < 0:
            return False
        if piv != c:
            for k in range(n):
                A[c, k], A[piv, k] = A[piv, k], A[c, k]
                W[c, k], W[piv, k] = W[piv, k], W[c, k]
        inv = 1.0 / A[c, c]
        for k in range(n):
            A[c, k] *= inv
            W[c, k] *= inv
        for r in range(n):
            f = A[r, c]
            if r != c and f != 0.0:
                for k in range(n):
                    A[r, k] -= f * A[c, k]
                    W[r, k] -= f * W[c, k]
    for r in range(n):
        for c in range(n):
            A[r, c] = W[r, c]
    return True


@kernel
def inverse3(A, i0, j0, out):
    """
    Set out = inverse of the 3x3 block A[i0:i0 + 3, j0:j0 + 3] by the adjugate.

    NaN/inf if singular.
    """
    a00, a01, a02 = A[i0, j0], A[i0, j0 + 1], A[i0, j0 + 2]
    a10, a11, a12 = A[i0 + 1, j0], A[i0 + 1, j0 + 1], A[i0 + 1, j0 + 2]
    a20, a21, a22 = A[i0 + 2, j0], A[i0 + 2, j0 + 1], A[i0 + 2, j0 + 2]
    c00 = a11 * a22 - a12 * a21
    c01 = a12 * a20 - a10 * a22
    c02 = a10 * a21 - a11 * a20
    inv = 1.0 / (a00 * c00 + a01 * c01 + a02 * c02)
    out[0, 0] = c00 * inv
    out[1, 0] = c01 * inv
    out[2, 0] = c02 * inv
    out[0, 1] = (a02 * a21 - a01 * a22) * inv
    out[1, 1] = (a00 * a22 - a02 * a20) * inv
    out[2, 1] = (a01 * a20 - a00 * a21) * inv
    out[0, 2] = (a01 * a12 - a02 * a11) * inv
    out[1, 2] = (a02 * a10 - a00 * a12) * inv
    out[2, 2] = (a00 * a11 - a01 * a10) * inv


@kernel
def rotate_by(Q, th, out, E):
    """Set out = Q exp(th^) by Rodrigues' formula (out may alias Q; E is 3x3 scratch)."""
    a = math.sqrt(th[0] * th[0] + th[1] * th[1] + th[2] * th[2])
    if a < 1e-12:
        s1, c1 = 1.0, 0.5
    else:
        s1 = math.sin(a) / a
        c1 = (1.0 - math.cos(a)) / (a * a)
    # E = I + s1 th^ + c1 th^ th^, with th^ th^ = th th^T - |th|^2 I
    for i in range(3):
        for j in range(3):
            E[i, j] = c1 * th[i] * th[j]
        E[i, i] += 1.0 - c1 * a * a
    E[0, 1] -= s1 * th[2]
    E[1, 0] += s1 * th[2]
    E[0, 2] += s1 * th[1]
    E[2, 0] -= s1 * th[1]
    E[1, 2] -= s1 * th[0]
    E[2, 1] += s1 * th[0]
    for i in range(3):
        q0, q1, q2 = Q[i, 0], Q[i, 1], Q[i, 2]
        for j in range(3):
            out[i, j] = q0 * E[0, j] + q1 * E[1, j] + q2 * E[2, j]


@kernel
def norm(a, p):
    """Euclidean (p = 2) or max (p = 0) norm of a."""
    acc = 0.0
    for i in range(a.size):
        if p == 2:
            acc += a[i] * a[i]
        else:
            acc = max(acc, abs(a[i]))
    return math.sqrt(acc) if p == 2 else acc


@kernel
def broyden(J, F, Fn, dx, alpha):
    """
    Apply the good Broyden update after the step s = alpha dx took F to Fn.

    J += ((Fn - F) - J s) s^T / (s^T s).
    """
    n = F.size
    ss = alpha * alpha * norm(dx, 2) ** 2
    for r in range(n):
        js = 0.0
        for c in range(n):
            js += J[r, c] * alpha * dx[c]
        corr = (Fn[r] - F[r] - js) / ss if ss > 0.0 else 0.0
        for c in range(n):
            J[r, c] += corr * alpha * dx[c]


@kernel
def broyden_inverse(H, F, Fn, dx, alpha, Hy, sH):
    """
    Apply the good Broyden update to an inverse Jacobian H after s = alpha dx took F to Fn.

    The Sherman-Morrison form of :func:`broyden`: H += (s - H y) s^T H / (s^T H y),
    y = Fn - F; O(n^2) where updating J and solving costs O(n^3). Hy, sH: (n,) scratch.
    """
    n = F.size
    den = 0.0
    for r in range(n):
        acc = 0.0
        for c in range(n):
            acc += H[r, c] * (Fn[c] - F[c])
        Hy[r] = acc
        den += alpha * dx[r] * acc
    if not abs(den) > 0.0:
        return
    for c in range(n):
        acc = 0.0
        for r in range(n):
            acc += alpha * dx[r] * H[r, c]
        sH[c] = acc
    for r in range(n):
        corr = (alpha * dx[r] - Hy[r]) / den
        for c in range(n):
            H[r, c] += corr * sH[c]
