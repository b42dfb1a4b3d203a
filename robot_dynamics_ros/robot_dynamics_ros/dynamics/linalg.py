# Copyright 2026 robot_dynamics_ros contributors
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

"""Small dense linear algebra for compiled code, in place: what numpy's would allocate."""
import math

from numba import njit


@njit(cache=True)
def cholesky(A, k):
    """Factor A[:k, :k] = L L^T in place (L in the lower triangle); False if not positive."""
    for j in range(k):
        s = A[j, j]
        for m in range(j):
            s -= A[j, m] * A[j, m]
        if not s > 0.0:
            return False
        A[j, j] = math.sqrt(s)
        for i in range(j + 1, k):
            s = A[i, j]
            for m in range(j):
                s -= A[i, m] * A[j, m]
            A[i, j] = s / A[j, j]
    return True


@njit(cache=True)
def cholesky_solve(L, b, k):
    """Solve in place: b[:k] = (L L^T)^-1 b[:k] with the factor of ``cholesky``."""
    for i in range(k):
        s = b[i]
        for m in range(i):
            s -= L[i, m] * b[m]
        b[i] = s / L[i, i]
    for i in range(k - 1, -1, -1):
        s = b[i]
        for m in range(i + 1, k):
            s -= L[m, i] * b[m]
        b[i] = s / L[i, i]
