"""Trajectory helpers (no ROS): the quintic rest-to-rest profile of the lecture notes."""
import numpy as np


def quintic(q0, qf, duration, t):
    """Positions, velocities and accelerations of the quintic from q0 to qf in ``duration``
    seconds, with zero velocity and acceleration at both ends, at times ``t`` (clamped).

    q(t) = q0 + (qf - q0) s(t/T),  s(x) = 10x^3 - 15x^4 + 6x^5.
    Returns three arrays of shape (len(t), n)."""
    if not duration > 0:
        raise ValueError(f'duration must be positive, got {duration}')
    q0, qf = np.asarray(q0, dtype=float), np.asarray(qf, dtype=float)
    if q0.shape != qf.shape or q0.ndim != 1:
        raise ValueError(f'start and goal must be vectors of one length, got {q0.shape} and {qf.shape}')
    x = np.clip(np.asarray(t, dtype=float) / duration, 0.0, 1.0)[:, None]
    s = 10 * x**3 - 15 * x**4 + 6 * x**5
    ds = (30 * x**2 - 60 * x**3 + 30 * x**4) / duration
    dds = (60 * x - 180 * x**2 + 120 * x**3) / duration**2
    dq = qf - q0
    return q0 + dq * s, dq * ds, dq * dds
