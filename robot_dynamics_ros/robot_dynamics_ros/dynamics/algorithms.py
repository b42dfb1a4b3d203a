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

"""
The public algorithms: numpy in, numpy out, one state ``(n,)`` or a batch ``(K, n)``.

These wrappers call the compiled kernels (``kernels.py``) on the model's packed buffer and
workspace and allocate only the result. The fast path hands C-contiguous float64 arrays straight
to the kernels, whose explicit signatures reject anything else with TypeError; only then do the
wrappers convert the inputs (lists, other dtypes, strided views, read-only arrays) and check their
shapes, with an error that names the argument.
"""
import numpy as np

from . import kernels as K

_F64 = np.dtype(np.float64)
_empty, _zeros = np.empty, np.zeros    # bound once: ~60 ns less a call than np.empty (measured)


def _state(model, x, name):
    """Return x as a writable C-contiguous float64 (n,) or (K, n) array (ValueError naming it)."""
    try:
        x = np.array(x, dtype=_F64, order='C', copy=not (
            isinstance(x, np.ndarray) and x.flags.writeable and x.flags.c_contiguous
            and x.dtype == _F64))
    except (TypeError, ValueError) as e:
        raise ValueError(f'{name} must be an array of numbers: {e}') from None
    if x.ndim not in (1, 2) or x.shape[-1] != model.n:
        raise ValueError(f'{name} must have shape ({model.n},) or (K, {model.n}) for '
                         f'{model.name}, got {x.shape}')
    return x


def _states(model, q, *others):
    """Return q and the other (array, name) pairs converted and checked to have q's shape."""
    q = _state(model, q, 'q')
    out = [q]
    for x, name in others:
        x = _state(model, x, name)
        if x.shape != q.shape:
            raise ValueError(f'{name} has shape {x.shape} but q has shape {q.shape}')
        out.append(x)
    return out


def _f_ext(model, f_ext, q):
    """
    Convert external wrenches to the kernels' layout.

    {link: [fx, fy, fz, tx, ty, tz] in the link frame} -> (n, 6) or (K, n, 6) body wrenches
    [moment; force] about each body's origin.
    """
    out = np.zeros(q.shape + (6,))
    if f_ext is None:
        return out
    for link, wrench in f_ext.items():
        body, X = model.link_frame(link)
        w = np.asarray(wrench, dtype=_F64)
        if w.shape != q.shape[:-1] + (6,):
            raise ValueError(f'f_ext["{link}"] must have shape {q.shape[:-1] + (6,)}, '
                             f'got {w.shape}')
        if not np.all(np.isfinite(w)):
            raise ValueError(f'f_ext["{link}"] is not finite')
        if body < 0:
            continue   # a wrench on the fixed base moves nothing
        f_link = np.concatenate([w[..., 3:], w[..., :3]], axis=-1)    # Featherstone [n; f]
        out[..., body, :] += f_link @ X                              # X^T f, row by row
    return out


def rnea(model, q, qd, qdd, f_ext=None):
    """
    Joint torques tau = M(q) qdd + c(q, qd) + g(q) - J^T f_ext (recursive Newton-Euler).

    ``f_ext`` maps link names to the wrench ``[fx, fy, fz, tx, ty, tz]`` that the environment
    applies to that link, in the link frame, about the link origin.
    """
    if f_ext is None:
        try:
            tau = _empty(model.n)
            K.rnea_one(model._data, q, qd, qdd, model._no_f_ext, tau)
            return tau
        except (TypeError, ValueError):   # not the fast path's types or shapes: check below
            pass
    q, qd, qdd = _states(model, q, (qd, 'qd'), (qdd, 'qdd'))
    fx = _f_ext(model, f_ext, q)
    tau = np.empty(q.shape)
    (K.rnea_one if q.ndim == 1 else K.rnea_batch)(model._data, q, qd, qdd, fx, tau)
    return tau


def gravity_torques(model, q):
    """g(q): the torques that hold the arm still against gravity."""
    try:
        tau = _empty(model.n)
        K.gravity_one(model._data, q, tau)
        return tau
    except (TypeError, ValueError):   # not the fast path's types or shapes: check below
        pass
    q, = _states(model, q)
    tau = np.empty(q.shape)
    (K.gravity_one if q.ndim == 1 else K.gravity_batch)(model._data, q, tau)
    return tau


def bias_torques(model, q, qd):
    """c(q, qd) + g(q): Coriolis, centrifugal and gravity torques (RNEA with qdd = 0)."""
    try:
        tau = _empty(model.n)
        K.rnea_one(model._data, q, qd, model._zeros, model._no_f_ext, tau)
        return tau
    except (TypeError, ValueError):   # not the fast path's types or shapes: check below
        pass
    q, qd = _states(model, q, (qd, 'qd'))
    return rnea(model, q, qd, np.zeros(q.shape))


def crba(model, q):
    """Compute the joint-space mass matrix M(q) by the composite-rigid-body algorithm."""
    try:
        H = _zeros((model.n, model.n))
        K.crba_one(model._data, q, H)
        return H
    except (TypeError, ValueError):   # not the fast path's types or shapes: check below
        pass
    q, = _states(model, q)
    H = np.zeros(q.shape + (model.n,))
    (K.crba_one if q.ndim == 1 else K.crba_batch)(model._data, q, H)
    return H


def aba(model, q, qd, tau, f_ext=None):
    """
    Compute joint accelerations by the articulated-body algorithm.

    qdd = M(q)^-1 (tau - c(q, qd) - g(q) + J^T f_ext).

    ``f_ext`` as in ``rnea``. ValueError naming the joints when the mass matrix is singular (a
    joint that moves no mass or inertia about its axis).
    """
    if f_ext is None:
        try:
            qdd = _empty(model.n)
            singular = K.aba_one(model._data, q, qd, tau, model._no_f_ext, qdd)
        except (TypeError, ValueError):   # not the fast path's types or shapes: check below
            pass
        else:
            if singular:
                _singular(model)
            return qdd
    q, qd, tau = _states(model, q, (qd, 'qd'), (tau, 'tau'))
    fx = _f_ext(model, f_ext, q)
    qdd = np.empty(q.shape)
    if (K.aba_one if q.ndim == 1 else K.aba_batch)(model._data, q, qd, tau, fx, qdd):
        _singular(model)
    return qdd


def coriolis_matrix(model, q, qd):
    """
    Compute the Coriolis matrix C(q, qd): C qd = c(q, qd) and dM/dt - 2 C is skew-symmetric.

    The Christoffel-consistent factorization (the one of Pinocchio's computeCoriolisMatrix), in
    O(n^2) by a recursion over the tree (Echeandia & Wensing 2021), not by differences.
    """
    return _one_state(model, 'coriolis_matrix', q, qd, np.empty((model.n, model.n)),
                      lambda q, qd, C: K.coriolis_one(model._data, q, qd, C))


def momentum(model, q, qd):
    """Compute the generalized momentum p = M(q) qd, in O(n) without forming M."""
    return _one_state(model, 'momentum', q, qd, np.empty(model.n),
                      lambda q, qd, p: K.momentum_one(model._data, q, qd, p))


def momentum_and_beta(model, q, qd):
    """
    Return (p, beta): the generalized momentum M(q) qd and beta = g(q) - C(q, qd)^T qd.

    What the momentum observer needs (dp/dt = tau + tau_ext - beta), in one O(n) sweep without
    forming M or C; C as in ``coriolis_matrix``.
    """
    out = np.empty((2, model.n))
    return tuple(_one_state(model, 'momentum_and_beta', q, qd, out,
                            lambda q, qd, o: K.momentum_beta_one(model._data, q, qd, o[0], o[1])))


def _one_state(model, what, q, qd, out, kernel):
    """
    Run ``kernel(q, qd, out)`` on one state and return ``out``.

    The compiled kernel is tried on the arguments as given first; when it refuses their types or
    shapes, the state is checked (a clear error) and converted, and the kernel runs again.
    """
    try:
        kernel(q, qd, out)
        return out
    except (TypeError, ValueError):   # not the fast path's types or shapes: check below
        pass
    q, qd = _states(model, q, (qd, 'qd'))
    if q.ndim != 1:
        raise ValueError(f'{what} takes one state (n,), not a batch')
    kernel(q, qd, out)
    return out


def _singular(model):
    d = K.articulated_inertias(model._ws, model.n)
    names = [j for j, di in zip(model.joint_names, d) if not di > 0]
    raise ValueError(f'aba: the mass matrix of {model.name} is singular: joints {names} have '
                     f'zero articulated inertia (they move no mass or inertia about their axis); '
                     f'forward dynamics is undefined there')
