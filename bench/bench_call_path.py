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
How many calls one joint_states message takes inside feedforward_node's loop, and which.

    bash scripts/dev.sh run python bench/bench_call_path.py [--arms planar_2r panda]
        [--modes gravity computed_torque cartesian_impedance] [--tree ARM MODE]

Each (arm, mode) runs ``ControlLoop.joint_states`` with the node's parameter defaults (the
observer and the limits on; the mode's), 200 messages of an arm holding still to warm up, then
counts, with ``sys.setprofile``, the Python function calls of one message: ``package`` those of
robot_dynamics_ros's own functions, ``all`` every Python call (numpy's Python wrappers
included; compiled kernels count once, as the call that enters them). Counts, not times: the
same on any machine and beside any load, so a change to the control core can say whether the
path got shorter (``doc/design/architecture.md`` quotes it). ``--tree`` prints the package's
calls of one message as a tree.
"""
import argparse
import os
import sys

import numpy as np

from robot_dynamics_ros.control import configuration
from robot_dynamics_ros.control.loop import ControlLoop
from robot_dynamics_ros.dynamics import RobotModel, example_urdf
from robot_dynamics_ros.nodes.feedforward_declarations import PARAMETERS

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Log, read_urdf  # noqa: E402

ARMS = {'planar_2r': None, 'ur5': 'ur_description/urdf/ur5_robot.urdf',
        'panda': 'panda_description/urdf/panda.urdf'}
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(configuration.__file__)))


def loop_for(arm, mode):
    """Return (loop, model, q) after 200 messages holding still: the loop in steady state."""
    rel = ARMS[arm]
    model = RobotModel.from_urdf_file(example_urdf(arm)) if rel is None else \
        RobotModel.from_urdf(read_urdf(rel))
    v = {name: d[1] for name, d in PARAMETERS.items()}
    v.update(mode=mode)
    ctrl = configuration.controller(model, v)
    obs, observing = configuration.observer(ctrl, v)
    loop = ControlLoop(Log())
    loop.set_observer_ready(True)
    loop.use_model(ctrl, obs, observing, v, 0.0)
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    # zero where it is 0.1 inside the limits; else the middle (panda's fingers: 0.04 m)
    q = np.where(hi - lo > 0.2, np.clip(np.zeros(model.n), lo + 0.1, hi - 0.1), 0.5 * (lo + hi))
    for i in range(200):
        message(loop, model, q, i * 1e-3)
    return loop, model, q


def message(loop, model, q, t):
    """One joint_states message at t (stamped t, now t), efforts unknown."""
    return loop.joint_states(list(model.joint_names), q.tolist(), [0.0] * model.n, [], t, t,
                             lambda: t)


def count(loop, model, q, t, tree=False):
    """Return (the package's calls, every Python call) of one message; print them if ``tree``."""
    counts = [0, 0]
    depth = [0]

    def profile(frame, event, arg):
        if event == 'call':
            counts[1] += 1
            code = frame.f_code
            if code.co_filename.startswith(PACKAGE):
                counts[0] += 1
                if tree:
                    rel = os.path.relpath(code.co_filename, PACKAGE)
                    print(f'{"  " * depth[0]}{code.co_qualname}  ({rel})')
            depth[0] += 1
        elif event == 'return':
            depth[0] -= 1

    sys.setprofile(profile)
    try:
        message(loop, model, q, t)
    finally:
        sys.setprofile(None)
    return counts[0] - 1, counts[1] - 1         # not joint_states itself


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--arms', nargs='+', default=list(ARMS), choices=list(ARMS))
    parser.add_argument('--modes', nargs='+',
                        default=['gravity', 'computed_torque', 'cartesian_impedance'])
    parser.add_argument('--tree', nargs=2, metavar=('ARM', 'MODE'))
    args = parser.parse_args()
    if args.tree:
        loop, model, q = loop_for(*args.tree)
        count(loop, model, q, 0.2, tree=True)
        return 0
    print(f'{"arm":<10} {"mode":<20} {"package":>8} {"all":>6}')
    for arm in args.arms:
        for mode in args.modes:
            loop, model, q = loop_for(arm, mode)
            package, every = count(loop, model, q, 0.2)
            again = count(loop, model, q, 0.201)
            assert again == (package, every), f'{arm} {mode}: {again} then {(package, every)}'
            print(f'{arm:<10} {mode:<20} {package:>8} {every:>6}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
