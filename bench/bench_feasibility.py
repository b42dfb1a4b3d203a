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
Speed of the trajectory feasibility check, next to Pinocchio doing the same RNEA.

    bash scripts/dev.sh run python bench/bench_feasibility.py

panda (its 7 arm joints; the fingers held), a 10 s quintic trajectory through 6 waypoints,
sampled every 1 ms (10 001 grid points plus both sides of each waypoint): the whole check
(sampling the segments, batch RNEA and gravity, the closed-form k*, the peaks), best of 7.
Target: under 20 ms (the trajectory issue). Next to it, the same samples through pin.rnea and
pin.computeGeneralizedGravity looped from Python: the ratio says what the check costs against
only the dynamics done with Pinocchio.
"""
import time

import numpy as np
import pinocchio as pin

from robot_dynamics_ros.control import JointTrajectory, check_trajectory
from robot_dynamics_ros.control.feasibility import sample_times
from robot_dynamics_ros.dynamics import RobotModel

from benchlib import erd_urdf

TARGET_MS = 20.0


def best(fn, repeat=7):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    print(__doc__.strip().split('\n\n')[0])
    path = erd_urdf('panda_description/urdf/panda.urdf')
    model = RobotModel.from_urdf_file(path)
    arm = model.joint_names[:7]
    rng = np.random.default_rng(0)
    lo, hi = model.position_limits[:7, 0], model.position_limits[:7, 1]
    mid, half = (lo + hi) / 2, 0.3 * (hi - lo) / 2
    P = mid + half * rng.uniform(-1, 1, (6, 7))
    V, A = rng.uniform(-0.2, 0.2, (6, 7)), rng.uniform(-0.5, 0.5, (6, 7))
    V[-1], A[-1] = 0.0, 0.0
    times = np.linspace(10 / 6, 10.0, 6)
    q_rest = np.r_[mid, 0.02, 0.02]
    traj = JointTrajectory(arm, times, P, V, A, start_time=0.0, q0=mid)
    result = check_trajectory(model, traj, joints=arm, q_rest=q_rest)      # compile / load
    ours = best(lambda: check_trajectory(model, traj, joints=arm, q_rest=q_rest))

    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    t, left = sample_times(times[-1], times, 1e-3)
    Qa, QDa, QDDa = traj.sample_relative(t, left)
    Q = np.tile(q_rest, (len(t), 1))
    QD, QDD = np.zeros_like(Q), np.zeros_like(Q)
    Q[:, :7], QD[:, :7], QDD[:, :7] = Qa, QDa, QDDa

    def pinocchio():
        for q, qd, qdd in zip(Q, QD, QDD):
            pin.rnea(pm, pd, q, qd, qdd)
            pin.computeGeneralizedGravity(pm, pd, q)
    theirs = best(pinocchio, 3)
    print(f'\n{len(result.t)} samples, k* = {result.min_time_scale:.4g} '
          f'({result.limiting_kind} of {result.limiting_joint})')
    print(f'{"check (whole)":<42} {ours * 1e3:8.2f} ms   target < {TARGET_MS:.0f} ms: '
          f'{"met" if ours * 1e3 < TARGET_MS else "MISSED"}')
    print(f'{"pin.rnea + gravity looped from Python":<42} {theirs * 1e3:8.2f} ms   ratio '
          f'check / Pinocchio {ours / theirs:.2f}')


if __name__ == '__main__':
    main()
