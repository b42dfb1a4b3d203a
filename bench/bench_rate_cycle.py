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
When a saturated loop swings: a joint's gains against the torque rate limit, in process.

    bash scripts/dev.sh run python bench/bench_rate_cycle.py [--inertia 1.5] [--delay 3]

One revolute joint about the vertical (no gravity torque), ``--inertia`` kg m^2 about its
axis, a 50 N m effort limit, no friction, runs feedforward_node's loop (``ControlLoop`` through
``bench_limits.Rig``: the limits layer at its defaults but for the torque rate) in
computed_torque holding where it is, kp = w^2 and kd = 2 w (critically damped at w rad/s), with
the simulator at 1 kHz, each command ``--delay`` steps late. It starts at 2 rad/s, where the
damping asks 2 M w 2 N m: for M = 1.5 beyond the effort limit from w = 9 rad/s. Printed per
torque rate R (``limits.max_torque_rate``; the default is 20 times the effort limit, 1000 N m/s)
and w: the fastest speed over the last 0.5 s of 3 s (rad/s; 0.000: at rest). A loop whose
command slews between the effort limits at the rate limit acts 2 U / R late (100 ms at the
default), and above a w of about 1.6 R / U it keeps swinging (issue #52: panda's task stiffness
tenfold under stalls; ``~/estimate_payload``'s hold after a stall's runaway on xarm7, joint1 at
+-4 rad/s). A light joint, whose demand stays within its effort limit, does not (``--inertia
0.01``: at rest up to w = 100; from 200, w T over 0.4, the delay alone makes it diverge).
"""
import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_limits  # noqa: E402
from benchlib import Delivery  # noqa: E402

EFFORT = 50.0           # N m
URDF = """<robot name="one_joint">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="{mass}"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-100" upper="100" effort="{effort}" velocity="100"/></joint>
</robot>
"""


def last_speed(w, rate, delay, v0=2.0, seconds=3.0):
    """Return the fastest |qd| over the last 0.5 s of a hold started at ``v0`` rad/s."""
    rig = bench_limits.Rig('one_joint', 'computed_torque', kp=[w * w], kd=[2.0 * w],
                           limits__max_torque_rate=[rate])
    rig.delivery = Delivery(delay)
    rig.sim.reset(rig.sim.q.copy(), np.array([v0]))
    rig.loop.ctrl.hold_here()
    rig.rec.clear()
    rig.run(seconds)
    qd = np.array([r[2][0] for r in rig.rec])
    return float(np.abs(qd[-500:]).max())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--inertia', type=float, default=1.5, help='kg m^2 about the axis')
    parser.add_argument('--delay', type=int, default=3, help='steps (ms) from state to command')
    parser.add_argument('--rates', type=float, nargs='+', default=[1000.0, 2000.0, 4000.0])
    parser.add_argument('--w', type=float, nargs='+', default=[10, 20, 30, 40, 50, 70, 100])
    args = parser.parse_args(argv)
    path = os.path.join(tempfile.mkdtemp(), 'one_joint.urdf')
    with open(path, 'w', encoding='utf-8') as f:
        f.write(URDF.format(mass=(args.inertia - 1e-4) / 0.25, effort=EFFORT))
    bench_limits.ARMS['one_joint'] = (path, [0.0], 0)
    print(f'one joint, {args.inertia} kg m^2, effort limit {EFFORT} N m, commands {args.delay} '
          f'ms late, from 2 rad/s; the fastest |qd| over the last 0.5 s of 3 s (rad/s)')
    heads = ' '.join(f'{"w=" + format(w, "g"):>8s}' for w in args.w)
    print(f'{"R (N m/s)":>10s} {"R/U":>5s} {heads}')
    for rate in args.rates:
        speeds = [last_speed(w, rate, args.delay) for w in args.w]
        print(f'{rate:10.0f} {rate / EFFORT:5.0f} ' + ' '.join(f'{s:8.3f}' for s in speeds),
              flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
