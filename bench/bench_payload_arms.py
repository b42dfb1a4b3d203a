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
``~/estimate_payload``'s procedure on five arms, four friction cases, two payloads, in process.

Each arm of example-robot-data is simulated carrying a payload of 20 % and 60 % of its rated
payload at (3, -2, 6) cm on its flange, which the controller's model lacks; the controller runs
with feedforward_node's default gains (kp 100, kd 20) and no friction compensation, each command
a step late (1 kHz). Friction "model / arm": the URDF's (xarm7, z1) or 2 % of the effort limits
Coulomb and 1 % viscous (the others), in the controller's model and in the simulator, or none;
or the model's and half or twice that in the simulator.
Printed per row: the mass error, the centre-of-mass error, the largest friction the model
missed (half the difference of a pose's two passes), the simulated seconds the sequence takes,
or the service's refusal.

With ``--stalls EVERY LONGEST`` the loop stalls now and then (on average every EVERY s, for a
third of LONGEST s to LONGEST, the arm acting on the last command meanwhile), as a process on a
loaded machine; the fastest joint speed the loop saw and the poses swept again are printed.

    python bench/bench_payload_arms.py [--delay 1] [--armature 0] [--stalls 2 0.15]
        [--arms ur5 panda ...]
"""
import argparse
import os
import sys
from types import SimpleNamespace

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'robot_dynamics_ros', 'test'))

from benchlib import erd_urdf, read_urdf  # noqa: E402
from payload_rig import Rig, friction_of  # noqa: E402
from robot_dynamics_ros.dynamics import RobotModel  # noqa: E402

UR_READY = [0.0, -1.2, 1.0, -1.4, -1.57, 0.0]
# path, payload link, start pose, rated payload (kg: the manufacturers' figures; z1's is the Z1
# Air's 2 kg)
ARMS = {
    'ur5': ('ur_description/urdf/ur5_robot.urdf', 'tool0', UR_READY, 5.0),
    'ur10': ('ur_description/urdf/ur10_robot.urdf', 'tool0', UR_READY, 10.0),
    'panda': ('panda_description/urdf/panda.urdf', 'panda_hand',
              [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02], 3.0),
    'xarm7': ('xarm_description/urdf/xarm7.urdf', 'link7',
              [0.0, -0.3, 0.0, 0.6, 0.0, 0.9, 0.0], 3.5),
    'z1': ('z1_description/urdf/z1.urdf', 'link06', [0.0, 1.0, -1.0, 0.0, 0.0, 0.0, 0.0], 2.0),
}
SHARES = (0.2, 0.6)
COM = np.array([0.03, -0.02, 0.06])
# the arm's friction: the same as the model's, none, some the model lacks, half, twice
CASES = (('yes', 'yes'), ('yes', 'no'), ('no', 'yes'), ('no', 'no'), ('yes', 'half'),
         ('yes', 'twice'))
SCALE = {'yes': 1.0, 'half': 0.5, 'twice': 2.0}


def one(xml, link, q0, mass, model_f, arm_f, delay, armature, stalls):
    payload = SimpleNamespace(mass=mass, com=COM,
                              inertia=mass * np.array([0.003, 0.0, 0.0, 0.003, 0.0, 0.002]))
    rig = Rig(xml, link, np.array(q0), payload, model_friction=model_f, arm_friction=arm_f,
              delay=delay, armature=armature, stalls=stalls)
    rig.run(1.5)                    # the arm sags onto the controller, the observer settles
    try:
        fit, missed, sim_s, wall_s = rig.estimate()
    except ValueError as e:
        return None, f'{e} (fastest {rig.fastest:.2f} rad/s)'
    return (100 * (fit.mass / mass - 1), 1e3 * np.abs(fit.com - COM).max(), sim_s, wall_s,
            missed, rig.compensated, rig.fastest, rig.retries), None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--delay', type=int, default=1,
                        help='steps (ms) from a state to the command that answers it acting')
    parser.add_argument('--arms', nargs='*', default=sorted(ARMS), choices=sorted(ARMS))
    parser.add_argument('--armature', type=float, default=0.0,
                        help='kg m^2 of rotor inertia on every joint, the arm\'s and the model\'s')
    parser.add_argument('--stalls', nargs=2, type=float, metavar=('EVERY', 'LONGEST'),
                        help='the loop stalls on average every EVERY s for up to LONGEST s')
    args = parser.parse_args()
    print(f'commands act {args.delay} ms after their state; armature {args.armature} kg m^2; '
          f'stalls {args.stalls or "none"}')
    print('| arm | payload (kg, share of rating) | friction model / arm | mass error (%) | '
          'CoM error (mm) | friction the model missed (N m) | second try, compensated | '
          'sequence (s, simulated) | wall (s) | fastest (rad/s) | poses swept again |')
    print('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
    bad = 0
    for arm, (path, link, q0, rating) in ARMS.items():
        if arm not in args.arms:
            continue
        xml = read_urdf(erd_urdf(path))
        f = friction_of(RobotModel.from_urdf(xml))
        for share in SHARES:
            for model_case, arm_case in CASES:
                arm_f = (None if arm_case == 'no' else
                         (SCALE[arm_case] * f[0], SCALE[arm_case] * f[1]))
                row, why = one(xml, link, q0, share * rating, f if model_case == 'yes' else None,
                               arm_f, args.delay, args.armature, args.stalls)
                head = f'| {arm} | {share * rating:.2f} ({share:.0%}) | {model_case} / {arm_case}'
                if row is None:
                    bad += 1
                    print(f'{head} | refused: {why} | | | | | | | |', flush=True)
                    continue
                err, com, sim_s, wall_s, missed, compensated, fastest, retries = row
                ok = abs(err) <= 3 and com <= 5
                bad += not ok
                mark = '' if ok else '**'
                print(f'{head} | {mark}{err:+.2f}{mark} | {mark}{com:.1f}{mark} | '
                      f'{missed:.2f} | {"yes" if compensated else "no"} | {sim_s:.1f} | '
                      f'{wall_s:.1f} | {fastest:.2f} | {retries} |', flush=True)
    print(f'\n{bad} rows outside 3 % and 5 mm or refused')


if __name__ == '__main__':
    main()
