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
The one checker of per-joint values from parameters, files and requests; the scalar rules.

"One value for every joint, or one per joint", each a number within its bounds: gains,
friction, thresholds, limits, initial positions, the simulator's sensor errors, the task law's
stiffnesses. It lives below control/ and simulation/ so both take it (they may not import each
other); its ValueError names the parameter, what it needs and what it got, the text the nodes
log and answer a parameter set with.

Settings checked once are frozen dataclasses whose arrays ``read_only`` makes read-only (the
controller's gains, task and friction settings, the force axes', the limits layer's and the
observer's).

Each numeric parameter has a rule (``OneOf``, ``Number``; ``Each`` for per-joint values): what
it must be, as a check whose ValueError names the parameter and as a text (``text``) the node's
parameter descriptors show (``ros2 param describe``: "Additional constraints"), its ``--help``
and the reference tables.
"""
from dataclasses import dataclass
import math

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


def read_only(settings):
    """Make a settings dataclass's arrays read-only: what is frozen stays so."""
    for value in vars(settings).values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)


def same_settings(a, b):
    """Whether two settings dataclasses of one kind hold the same values (arrays by value)."""
    return type(a) is type(b) and all(
        np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
        for x, y in zip(vars(a).values(), vars(b).values()))


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


@dataclass(frozen=True)
class OneOf:
    """A word among ``choices``."""

    choices: tuple

    @property
    def text(self):
        return f'one of {", ".join(self.choices)}'

    def check(self, name, value):
        """Return ``value``; ValueError naming ``name`` when it is not one of the choices."""
        if value not in self.choices:
            raise ValueError(f'{name} must be one of {self.choices}, got "{value}"')
        return value


@dataclass(frozen=True)
class Number:
    """
    A number >= ``low`` (> when ``strict``), <= ``high``, finite unless ``inf``; never NaN.

    ``note``: what the refusal adds after the bound, as "(0: never)" or "(Hz)".
    """

    low: float = -math.inf
    strict: bool = False
    high: float = math.inf
    inf: bool = True
    note: str = ''

    @property
    def text(self):
        words = ([f'{">" if self.strict else ">="} {self.low:g}'] if self.low > -math.inf
                 else []) + ([f'<= {self.high:g}'] if self.high < math.inf else []) + (
            [] if self.inf else ['finite'])
        return ' and '.join(words) + (f' {self.note}' if self.note else '')

    def check(self, name, value):
        """Return ``value`` as a float; ValueError naming ``name`` when it breaks the rule."""
        try:
            x = float(value)
        except (TypeError, ValueError):
            x = math.nan
        ok = (x > self.low if self.strict else x >= self.low) and x <= self.high and (
            self.inf or math.isfinite(x))
        if not ok:
            raise ValueError(f'{name} must be {self.text}, got {value}')
        return x


@dataclass(frozen=True)
class Each:
    """
    Numbers, one per joint (or per ``of``: "commanded joint", "axis" ...), as ``per_joint``.

    One value is every one's (``one``); ``size``: how many there are (0: as many as the arm
    has joints, told at the check); each >= ``low`` (> when ``strict``), finite unless ``inf``;
    ``note``: what the text adds, as "(empty: ...)".
    """

    low: float = None
    strict: bool = False
    inf: bool = False
    of: str = 'joint'
    one: bool = True
    size: int = 0
    note: str = ''

    @property
    def text(self):
        count = f'{self.size} (one per {self.of})' if self.size else f'one per {self.of}'
        return ('one or ' if self.one else '') + count + _each(self.low, self.strict, self.inf) \
            + (f' {self.note}' if self.note else '')

    def check(self, name, values, n=0):
        """Return ``values`` as a new array (``size`` or ``n``); ValueError naming ``name``."""
        return per_joint(values, self.size or n, name, low=self.low, strict=self.strict,
                         inf=self.inf, of=self.of, one=self.one)
