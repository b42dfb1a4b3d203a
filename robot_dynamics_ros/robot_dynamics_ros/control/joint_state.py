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
The merged joint state of one model: what joint_states said of each joint, and when.

Streams that each name some of the joints (an arm's driver, a gripper's) merge here into model
order; joints never received sit at their default positions. Which commanded joints are
missing (never received) or stale (not updated within a timeout, in the plant's time where it
is simulated) is asked here. The arrays are updated in place, so whoever holds ``q`` sees every
merge: a controller built for new parameters of the same model takes the store itself, the
state owned once and never copied (``Controller.take_state``); a controller of another model
takes a copy remapped by joint name (``remapped``).
"""
import math

import numpy as np


def shared_joints(model, other):
    """Return (indices in model, indices in other) of the joints both models have."""
    pairs = [(i, other.index(j)) for i, j in enumerate(model.joint_names)
             if j in other.joint_names]
    mine, theirs = zip(*pairs) if pairs else ((), ())
    return np.array(mine, dtype=np.int64), np.array(theirs, dtype=np.int64)


class JointStateStore:
    """The state of ``model``'s joints, ``cmd`` the commanded ones (model indices)."""

    def __init__(self, model, cmd, default_q):
        self.model, self.cmd = model, np.asarray(cmd, dtype=np.int64)
        self.names = tuple(model.joint_names[i] for i in self.cmd)   # the commanded, in order
        n = model.n
        self.q, self.qd = np.array(default_q, dtype=float), np.zeros(n)
        self.received = np.zeros(n, dtype=bool)
        self.updated = np.full(n, -np.inf)      # monotonic time of each joint's last update
        self.stamped = np.zeros(n)              # and its header stamp (0: unstamped)
        self.all_received = False               # every commanded joint received once (a cache)
        self.oldest = -np.inf                   # the commanded joints' oldest update (a cache)
        self._maps = {}     # joint_state names -> (model indices, message indices, commanded)

    def reset(self, default_q):
        """Forget every joint state: joints take ``default_q`` and zero velocity (in place)."""
        self.q[:], self.qd[:] = default_q, 0.0
        self.received[:], self.updated[:], self.stamped[:] = False, -np.inf, 0.0
        self.all_received = False
        self.oldest = -np.inf

    def use_defaults(self, default_q):
        """Put the joints never received at ``default_q``."""
        self.q[~self.received] = np.asarray(default_q)[~self.received]

    def takes_over(self, model, cmd):
        """Whether a controller of ``model`` commanding ``cmd`` can take this store as it is."""
        return model.joint_names == self.model.joint_names and np.array_equal(cmd, self.cmd)

    def remapped(self, model, cmd, default_q):
        """Return a new store of ``model``: the joints both have keep their state."""
        out = JointStateStore(model, cmd, default_q)
        mine, theirs = shared_joints(model, self.model)
        out.q[mine], out.qd[mine] = self.q[theirs], self.qd[theirs]
        out.received[mine], out.updated[mine] = self.received[theirs], self.updated[theirs]
        out.stamped[mine] = self.stamped[theirs]
        out.all_received = bool(out.received[out.cmd].all())
        out.oldest = out.updated[out.cmd].min() if len(out.cmd) else -np.inf
        out.use_defaults(default_q)
        return out

    def merge(self, names, positions, velocities, now, stamp=0.0):
        """
        Merge a JointState's arrays into the state.

        Only the joints it names change (extra names are ignored); no velocities mean zero velocity
        for those joints. ``now``: the time of receipt (s, monotonic) for freshness; ``stamp``: the
        message's header stamp (s, 0 unstamped), the plant's time of the state. Returns (model
        joints updated, commanded joints updated). ValueError, changing nothing, for a joint named
        twice, short arrays or NaN.
        """
        model_idx, msg_idx, n_cmd = self.map(names)
        n_names = len(names)
        if len(positions) < n_names:
            raise ValueError(f'position has {len(positions)} values for {n_names} names')
        if len(velocities) and len(velocities) < n_names:
            raise ValueError(f'velocity has {len(velocities)} values for {n_names} names')
        if len(model_idx) == 0:
            return 0, 0
        pos = np.asarray(positions, dtype=float)[msg_idx]
        vel = np.asarray(velocities, dtype=float)[msg_idx] if len(velocities) else 0.0
        # a sum is finite when every term is (a NaN or Inf propagates); the exact check only
        # when it is not, since finite values near 1e308 can overflow a sum
        if not math.isfinite(pos.sum() + (vel.sum() if len(velocities) else 0.0)) and not (
                np.isfinite(pos).all() and np.isfinite(vel).all()):
            raise ValueError('joint state contains NaN or Inf')
        self.q[model_idx] = pos
        self.qd[model_idx] = vel
        self.received[model_idx] = True
        self.updated[model_idx] = now
        self.stamped[model_idx] = stamp
        # the oldest update of a commanded joint: now when the message names them all (one
        # driver's stream), else looked for (several streams, each naming some)
        if n_cmd == len(self.cmd):
            self.oldest = now
        elif n_cmd:
            self.oldest = self.updated[self.cmd].min()
        if not self.all_received:
            self.all_received = bool(self.received[self.cmd].all())
        return len(model_idx), n_cmd

    def map(self, names):
        """(model indices, message indices, commanded joints among them) for ``names``, cached."""
        key = tuple(names)
        maps = self._maps.get(key)
        if maps is None:
            if len(set(key)) != len(key):
                twice = sorted({nm for nm in key if key.count(nm) > 1})
                raise ValueError(f'names joints twice: {twice}')
            model = self.model
            pairs = [(model.index(nm), k) for k, nm in enumerate(key) if model.has_joint(nm)]
            model_idx = np.array([p[0] for p in pairs], dtype=np.int64)
            maps = (model_idx, np.array([p[1] for p in pairs], dtype=np.int64),
                    int(np.isin(model_idx, self.cmd).sum()))
            if len(self._maps) > 16:
                self._maps.clear()
            self._maps[key] = maps
        return maps

    def missing(self):
        """Commanded joints never received."""
        if self.all_received or self.received[self.cmd].all():
            return []
        return [self.model.joint_names[i] for i in self.cmd if not self.received[i]]

    def stale(self, now, timeout, plant_clock=None):
        """
        Commanded joints whose last update is older than ``timeout`` (or never came).

        ``plant_clock``: None, or a callable returning the plant's time when it is simulated
        (use_sim_time). Then a joint whose stamped state is not older than ``timeout`` in the
        plant's time is not stale, however long ago it came: a simulator in lockstep, or one the
        machine starved, has not moved on either.
        """
        if now - self.oldest <= timeout:
            return []
        old = now - self.updated[self.cmd] > timeout
        plant_now = None if plant_clock is None else plant_clock()
        if plant_now is not None:
            stamp = self.stamped[self.cmd]
            # stamps of another clock (a wall-time driver under use_sim_time) do not count
            old &= ~((stamp > 0.0) & (np.abs(plant_now - stamp) <= timeout))
        return [self.names[k] for k in np.flatnonzero(old)]
