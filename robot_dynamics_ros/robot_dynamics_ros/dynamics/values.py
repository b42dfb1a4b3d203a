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
The one checker of per-joint values from parameters, files and requests.

"One value for every joint, or one per joint", each a number within its bounds: gains,
friction, thresholds, limits, initial positions, the simulator's sensor errors, the task law's
stiffnesses. It lives below control/ and simulation/ so both take it (they may not import each
other); its ValueError names the parameter, what it needs and what it got, the text the nodes
log and answer a parameter set with.
"""
import numpy as np


def per_joint(values, n, what, *, low=None, strict=False, inf=False, of='joint', one=True):
    """
    Return ``values`` as a new array of ``n`` floats; ValueError naming ``what`` if it cannot be.

    One value is every joint's (``one``; else exactly ``n`` are needed), or one per ``of``
    ("joint", "commanded joint", "model joint" ...). Each is a number (never NaN), finite
    unless ``inf``, and >= ``low`` (> when ``strict``) when ``low`` is given.
    """
    try:
        a = np.array(values, dtype=float).ravel()
    except (TypeError, ValueError):
        a = None
    if a is not None and one and a.size == 1:
        a = np.full(n, a[0])
    ok = a is not None and a.shape == (n,) and not np.any(np.isnan(a)) and (
        inf or bool(np.all(np.isfinite(a))))
    if ok and low is not None:
        ok = bool(np.all(a > low) if strict else np.all(a >= low))
    if not ok:
        count = f'one value or one per {of} ({n})' if one else \
            f'{n} value{"" if n == 1 else "s"} (one per {of})'
        # a NaN or an infinity named as such: '[nan]' reads as a word where it is a number
        bad = a is not None and (np.any(np.isnan(a)) or not inf and np.any(np.isinf(a)))
        raise ValueError(f'{what} needs {count}{_each(low, strict, inf)}, got {_shown(values)}'
                         + (' (NaN or Inf)' if bad else ''))
    return a


def _each(low, strict, inf):
    """Return the bounds in words: ', each finite >= 0' and the like."""
    words = ([] if inf else ['finite']) + \
        ([] if low is None else [f'{">" if strict else ">="} {low:g}'])
    return ', each ' + ' '.join(words) if words else ''


def _shown(values):
    """Return the values given as a list where they are numbers (else their repr)."""
    try:
        return np.asarray(values, dtype=float).ravel().tolist()
    except (TypeError, ValueError):
        return repr(values)
