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
The controller's command streams in closed loop, to show a refactor changes no command.

    bash scripts/dev.sh run python bench/command_streams.py --save A.npz
    bash scripts/dev.sh run python bench/command_streams.py --save B.npz --against A.npz

Sixteen scenarios on bench_limits' rig (feedforward_node's loop at the node's defaults, the
simulator at 1 kHz, the command of each state applied one step later): ur5, panda and xarm7 in
each of the five modes, friction compensation 0.5, with a trajectory past the limits in the
trajectory modes, a parameter change mid-motion (new gains), a 10 N push, in computed torque the
payload service's take_over / compensate / hand_back, then a change of mode; and a workspace
box the frame starts outside of (dropped). Each stream's SHA-256 is printed, and at how many
steps the limits layer named a bound as acting (``LimitLayer.active``: what the node's "shapes
the command" log lines come from); ``--against`` an earlier run's file prints, per scenario,
whether the stream is identical to the bit (else the largest difference, N m) and whether the
same bounds acted at every step. To compare two commits, run this file with the other tree's
package first on the path (``PYTHONPATH=<tree>/robot_dynamics_ros``), each tree's numba cache
fresh (a cache that compiled other specializations first can change a stream at 1e-14). Exits
1 when a stream or what acted differs.
"""
import argparse
import hashlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_limits as rigs  # noqa: E402
from robot_dynamics_ros.control import payload_estimation  # noqa: E402

MODES = ('gravity', 'computed_torque', 'feedforward', 'cartesian_impedance',
         'operational_space')


def run(rig, seconds, acted):
    """Run the rig for ``seconds``, noting after each step what the limits layer said acted."""
    for _ in range(int(round(seconds / rig.sim.dt))):
        rig.step()
        acted.append(repr(rig.ctrl.limit_layer.active))


def scenarios():
    """Yield (name, the command stream: one row per command, what acted: one str per step)."""
    for arm in ('ur5', 'panda', 'xarm7'):
        for mode in MODES:
            rig, acted = rigs.Rig(arm, mode, friction_compensation=0.5), []
            if mode in ('computed_torque', 'feedforward'):
                rigs.past_the_limits(rig, 0.5)
            run(rig, 0.2, acted)
            rig.set(kp=[150.0], kd=[25.0])              # new parameters mid-motion
            rig.force = np.array([0.0, 10.0, -5.0])
            run(rig, 0.2, acted)
            rig.force = None
            if mode == 'computed_torque':               # the payload service's gains
                saved = payload_estimation.take_over(rig.ctrl, 1e-3, rig.ctrl.cmd)
                run(rig, 0.1, acted)
                payload_estimation.compensate(rig.ctrl, rig.ctrl.cmd)
                run(rig, 0.1, acted)
                payload_estimation.hand_back(rig.ctrl, saved)
            rig.set(mode='cartesian_impedance' if mode == 'computed_torque'
                    else 'computed_torque')
            run(rig, 0.2, acted)
            yield f'{arm} {mode}', np.array([r[3] for r in rig.rec]), acted
    rig, acted = rigs.Rig('ur5', 'cartesian_impedance', limits__workspace=[5, 5, 5, 6, 6, 6]), []
    run(rig, 0.2, acted)
    yield 'ur5 box outside', np.array([r[3] for r in rig.rec]), acted


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--save', required=True, help='.npz file for this run\'s streams')
    parser.add_argument('--against', help='an earlier run\'s .npz to compare with')
    args = parser.parse_args()
    streams, acts = {}, {}
    for name, tau, acted in scenarios():
        streams[name], acts[name + ' acted'] = tau, np.array(acted)
    np.savez(args.save, **streams, **acts)
    before = dict(np.load(args.against)) if args.against else {}
    differ = 0
    for name, tau in streams.items():
        digest = hashlib.sha256(tau.tobytes()).hexdigest()[:16]
        acted = acts[name + ' acted']
        line = f'{name:<28} {len(tau):>5} commands  {digest}  {np.sum(acted != "()"):>4} acted'
        if name in before:
            old = before[name]
            if old.shape != tau.shape:
                line += f'  shape {old.shape} before'
                differ += 1
            elif np.array_equal(old, tau):
                line += '  identical'
            else:
                line += f'  differs by up to {np.abs(old - tau).max():.3g} N m'
                differ += 1
            old = before.get(name + ' acted')
            if old is None:
                line += ' (no acted before)'
            elif old.shape != acted.shape or np.any(old != acted):
                line += (f'; acted differs at {np.sum(old != acted)} commands'
                         if old.shape == acted.shape else '; acted differs')
                differ += 1
        print(line)
    return 1 if differ else 0


if __name__ == '__main__':
    sys.exit(main())
