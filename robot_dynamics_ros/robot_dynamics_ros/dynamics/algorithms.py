"""The public algorithms: numpy in, numpy out, one state ``(n,)`` or a batch ``(K, n)``.

These wrappers check shapes, turn ``f_ext`` dicts into body wrenches and call the compiled kernels
(``kernels.py``) on the model's packed arrays and workspace. They allocate only the result.
"""
import numpy as np

from . import kernels as K

_F64 = np.dtype(np.float64)


def _state(model, x, name):
    """x as a C-contiguous float64 (n,) or (K, n) array."""
    if type(x) is not np.ndarray or x.dtype is not _F64 or not x.flags.c_contiguous:
        x = np.ascontiguousarray(x, dtype=_F64)
    if x.ndim not in (1, 2) or x.shape[-1] != model.n:
        raise ValueError(f'{name} must have shape ({model.n},) or (K, {model.n}) for '
                         f'{model.name}, got {x.shape}')
    return x


def _like(model, x, q, name):
    x = _state(model, x, name)
    if x.shape != q.shape:
        raise ValueError(f'{name} has shape {x.shape} but q has shape {q.shape}')
    return x


def _f_ext(model, f_ext, q):
    """{link: [fx, fy, fz, tx, ty, tz] in the link frame} -> (n, 6) or (K, n, 6) body wrenches."""
    if f_ext is None:
        return None
    if isinstance(f_ext, np.ndarray) and f_ext.shape == q.shape + (6,):
        return np.ascontiguousarray(f_ext, dtype=_F64)   # already body wrenches [n; f]
    out = np.zeros(q.shape + (6,))
    for link, wrench in f_ext.items():
        body, X = model.link_frame(link)
        w = np.asarray(wrench, dtype=_F64)
        if w.shape[-1:] != (6,) or (w.ndim == 2 and q.ndim == 1) or w.ndim > 2 or (
                w.ndim == 2 and w.shape[0] != q.shape[0]):
            raise ValueError(f'f_ext["{link}"] must have shape (6,) or (K, 6), got {w.shape}')
        if not np.all(np.isfinite(w)):
            raise ValueError(f'f_ext["{link}"] is not finite')
        if body < 0:
            continue   # a wrench on the fixed base moves nothing
        f_link = np.concatenate([w[..., 3:], w[..., :3]], axis=-1)    # Featherstone [n; f]
        out[..., body, :] += f_link @ X                              # X.T f, for each row
    return out


def rnea(model, q, qd, qdd, f_ext=None):
    """Joint torques tau = M(q) qdd + c(q, qd) + g(q) - J^T f_ext (recursive Newton-Euler).

    ``f_ext`` maps link names to the wrench ``[fx, fy, fz, tx, ty, tz]`` that the environment
    applies to that link, in the link frame, about the link origin."""
    q = _state(model, q, 'q')
    qd = _like(model, qd, q, 'qd')
    qdd = _like(model, qdd, q, 'qdd')
    fx = _f_ext(model, f_ext, q)
    tau = np.empty(q.shape)
    if q.ndim == 1:
        K.rnea_one(model._ji, model._body, model._a_grav, model._ws, q, qd, qdd, fx, tau)
    else:
        K.rnea_batch(model._ji, model._body, model._a_grav, model._ws, q, qd, qdd, fx, tau)
    return tau


def gravity_torques(model, q):
    """g(q): the torques that hold the arm still against gravity."""
    q = _state(model, q, 'q')
    tau = np.empty(q.shape)
    if q.ndim == 1:
        K.rnea_one(model._ji, model._body, model._a_grav, model._ws, q, None, None, None, tau)
    else:
        K.rnea_batch(model._ji, model._body, model._a_grav, model._ws, q, None, None, None, tau)
    return tau


def bias_torques(model, q, qd):
    """c(q, qd) + g(q): Coriolis, centrifugal and gravity torques (RNEA with qdd = 0)."""
    q = _state(model, q, 'q')
    qd = _like(model, qd, q, 'qd')
    tau = np.empty(q.shape)
    if q.ndim == 1:
        K.rnea_one(model._ji, model._body, model._a_grav, model._ws, q, qd, None, None, tau)
    else:
        K.rnea_batch(model._ji, model._body, model._a_grav, model._ws, q, qd, None, None, tau)
    return tau


def crba(model, q):
    """The joint-space mass matrix M(q) (symmetric), by the composite-rigid-body algorithm."""
    q = _state(model, q, 'q')
    H = np.zeros(q.shape + (model.n,))
    if q.ndim == 1:
        K.crba_one(model._ji, model._body, model._ws, q, H)
    else:
        K.crba_batch(model._ji, model._body, model._ws, q, H)
    return H


def aba(model, q, qd, tau, f_ext=None):
    """Joint accelerations qdd = M(q)^-1 (tau - c(q, qd) - g(q) + J^T f_ext), by the
    articulated-body algorithm. ``f_ext`` as in ``rnea``."""
    q = _state(model, q, 'q')
    qd = _like(model, qd, q, 'qd')
    tau = _like(model, tau, q, 'tau')
    fx = _f_ext(model, f_ext, q)
    qdd = np.empty(q.shape)
    if q.ndim == 1:
        K.aba_one(model._ji, model._body, model._a_grav, model._ws, q, qd, tau, fx, qdd)
    else:
        K.aba_batch(model._ji, model._body, model._a_grav, model._ws, q, qd, tau, fx, qdd)
    return qdd
