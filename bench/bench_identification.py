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
Speed of identification: the regressor against Pinocchio's, identify and excite end to end.

    bash scripts/dev.sh run python bench/bench_identification.py

1. The regressor per sample (inertial columns, one state from Python, and per point of a batch
   of 1000) on ur5 and panda, next to pin.computeJointTorqueRegressor in the same run; target
   ratio <= 1.0.
2. ``robot-dynamics identify`` as a user runs it (a new process: imports, bag reading, filters,
   least squares, the SDP, the corrected files) on a 7-joint arm (xarm7), a 30 s bag at 1 kHz
   (30 000 samples, MCAP, noise as in the tests); target <= 5 s.
3. ``robot-dynamics excite`` on ur5 and panda (default 5 harmonics, 20 s); target <= 30 s.
Exits 0 either way (a benchmark, not a test).
"""
import os
import subprocess
import sys
import tempfile
import time
import timeit

import numpy as np
import pinocchio as pin

from robot_dynamics_ros.dynamics import RobotModel
from robot_dynamics_ros.dynamics.regressor import regressor

from benchlib import erd_urdf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'robot_dynamics_ros', 'test'))
ARMS = {'ur5': 'ur_description/urdf/ur5_robot.urdf',
        'panda': 'panda_description/urdf/panda.urdf',
        'xarm7': 'xarm_description/urdf/xarm7.urdf'}
CLI = [sys.executable, '-m', 'robot_dynamics_ros.tools.cli']


def best(fn, number, repeat=7):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def target(what, value, limit, unit):
    verdict = 'met' if value <= limit else 'MISSED'
    print(f'[target] {what}: {value:.3g}{unit} (<= {limit:g}{unit}) {verdict}')


def regressor_speed():
    for name in ('ur5', 'panda'):
        path = erd_urdf(ARMS[name])
        model = RobotModel.from_urdf_file(path)
        pm = pin.buildModelFromUrdf(path)
        pd = pm.createData()
        rng = np.random.default_rng(0)
        q, qd, qdd = (rng.uniform(-1, 1, model.n) for _ in range(3))
        Q, QD, QDD = (rng.uniform(-1, 1, (1000, model.n)) for _ in range(3))
        out = np.empty((model.n, 10 * model.n))
        outb = np.empty((1000, model.n, 10 * model.n))
        regressor(model, q, qd, qdd, out=out)
        regressor(model, Q, QD, QDD, out=outb)
        ours = best(lambda: regressor(model, q, qd, qdd, out=out), 2000)
        batch = best(lambda: regressor(model, Q, QD, QDD, out=outb), 5) / 1000
        theirs = best(lambda: pin.computeJointTorqueRegressor(pm, pd, q, qd, qdd), 2000)
        print(f'{name:6s} regressor: ours {ours * 1e6:6.2f} us, batch {batch * 1e6:6.2f} '
              f'us/point, Pinocchio {theirs * 1e6:6.2f} us')
        target(f'regressor {name} ours/Pinocchio', ours / theirs, 1.0, 'x')
        target(f'regressor {name} batch/Pinocchio', batch / theirs, 1.0, 'x')


def identify_speed(folder):
    from identification_data import recording, true_arm, write_bag
    from test_identification import NOISE, fourier
    path = erd_urdf(ARMS['xarm7'])
    nominal = RobotModel.from_urdf_file(path)
    bag = os.path.join(folder, 'xarm7_30s')
    write_bag(bag, recording(true_arm(nominal), fourier(nominal, 1), 30.0, noise=NOISE), 'mcap')
    runs = []
    for _ in range(3):
        t0 = time.monotonic()
        r = subprocess.run(CLI + ['identify', '--urdf', path, bag, '-o',
                                  os.path.join(folder, 'c.urdf'), '--params-out',
                                  os.path.join(folder, 'p.yaml'), '--report',
                                  os.path.join(folder, 'r.yaml')],
                           capture_output=True, text=True)
        runs.append(time.monotonic() - t0)
        if r.returncode:
            print(r.stderr)
            return
    print(f'identify xarm7, 30 s at 1 kHz (30001 samples): {", ".join(f"{x:.2f}" for x in runs)}'
          f' s (whole process)')
    target('identify 7 joints 30 s bag', min(runs), 5.0, ' s')


def excite_speed(folder):
    for name in ('ur5', 'panda'):
        t0 = time.monotonic()
        r = subprocess.run(CLI + ['excite', '--urdf', erd_urdf(ARMS[name]), '-o',
                                  os.path.join(folder, f'{name}.yaml')],
                           capture_output=True, text=True)
        dt = time.monotonic() - t0
        line = [x for x in r.stdout.splitlines() if x.startswith('excite: condition number')]
        print(f'excite {name}: {dt:.1f} s; {line[0] if line else r.stderr[-300:]}')
        target(f'excite {name}', dt, 30.0, ' s')


if __name__ == '__main__':
    regressor_speed()
    with tempfile.TemporaryDirectory() as d:
        identify_speed(d)
        excite_speed(d)
