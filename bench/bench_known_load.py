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
Motor-current gains with and without a known load, on an arm of example-robot-data.

The setting of test_identify_known_load (the arm 10 % heavier than its description, 1-2.5 N m of
Coulomb friction with stiction and asymmetry, currents through gains 8-40 N m/A with noise and
counts, Fourier excitations under computed torque) on ``--arm``, with the known load's mass and
centre of mass chosen. Printed: whether ``robot-dynamics identify`` (as a user runs it) refuses
the gains without a load, and why; each gain's error without a load (accepted) and with it; the
known-load fit's gains for several reaches of the rows left out beside slow ones
(``SLOW_REACH``); and the payload of a third recording (3 kg at (0, 3, 8) cm) identified from
currents with the corrected URDF and either set of gains.

    python bench/bench_known_load.py [--arm ur5|kinova] [--load-mass 2] [--load-com 0.05 0 0.05]
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'robot_dynamics_ros', 'test'))

from conftest import ROBOTS, erd_root  # noqa: E402
from robot_dynamics_ros.control import identification as idf  # noqa: E402
from robot_dynamics_ros.dynamics import RobotModel  # noqa: E402
from robot_dynamics_ros.tools.recordings import read  # noqa: E402
from test_identify_cli import run  # noqa: E402
from test_identify_known_load import GAINS, PAYLOAD, arm_and_truth, record  # noqa: E402

LINKS = {'ur5': 'tool0', 'kinova': 'j2s6s200_end_effector'}


def gains_of(path):
    with open(path) as f:
        return np.array(yaml.safe_load(f)['/**']['ros__parameters']['effort_gain'])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--arm', default='ur5', choices=sorted(LINKS))
    parser.add_argument('--load-mass', type=float, default=2.0)
    parser.add_argument('--load-com', type=float, nargs=3, default=[0.05, 0.0, 0.05])
    args = parser.parse_args()
    urdf = os.path.join(erd_root(), ROBOTS[args.arm])
    link = LINKS[args.arm]
    nominal = RobotModel.from_urdf_file(urdf)
    arm, truth = arm_and_truth(nominal)
    load = (args.load_mass, tuple(args.load_com), (0.004, 0.0, 0.0, 0.004, 0.0, 0.003))
    d = tempfile.mkdtemp(prefix='bench_known_load_')
    record(arm, nominal, truth, 1, 30.0, f'{d}/unloaded.csv')
    record(arm.with_payload(link, *load), nominal, truth, 3, 30.0, f'{d}/loaded.csv')
    record(arm.with_payload(link, *PAYLOAD), nominal, truth, 4, 20.0, f'{d}/payload.csv')
    print(f'{args.arm}: true gains {GAINS.tolist()}; known load {args.load_mass:g} kg at '
          f'{args.load_com} m on {link}; recordings in {d}')
    loaded = ['--loaded', f'{d}/loaded.csv', '--load-mass', args.load_mass, '--load-link', link]
    rows = {}
    r = run('identify', '--urdf', urdf, f'{d}/unloaded.csv', '--effort-units', 'current',
            '--report', f'{d}/refused.yaml')
    said = ' '.join(r.stderr.split()).split('. To fix it')[0]
    print('without a load: ' + (f'refused: {said}' if r.returncode else 'accepted'))
    for tag, extra in (('description', ['--accept-gains']), ('known load', loaded)):
        r = run('identify', '--urdf', urdf, f'{d}/unloaded.csv', '--effort-units', 'current',
                *extra, '-o', f'{d}/{tag[0]}.urdf', '--params-out', f'{d}/{tag[0]}.yaml')
        if r.returncode:
            print(f'{tag}: identify refused: {r.stderr}')
            continue
        rows[tag] = gains_of(f'{d}/{tag[0]}.yaml')
    # the known-load fit in process, for several reaches
    samples = idf.prepare(nominal, read(f'{d}/unloaded.csv'))
    with_load = idf.prepare(nominal, read(f'{d}/loaded.csv'), rate=samples.rate)
    base = idf.base_parameters(nominal)
    kept = idf.SLOW_REACH
    for reach in (0, 2, kept):
        idf.SLOW_REACH = reach
        g = idf.effort_gains_known(nominal, samples, base, 0.01, with_load,
                                   idf.KnownLoad(link, args.load_mass))
        rows[f'known load, reach {reach}'] = g.gains
    idf.SLOW_REACH = kept
    print('\n| gains | ' + ' | '.join(nominal.joint_names) + ' |')
    print('| --- |' + ' --- |' * nominal.n)
    for tag, g in rows.items():
        errors = [f'{100 * (x / k - 1):+.2f}' for x, k in zip(g, GAINS)]
        print(f'| {tag} (error %) | ' + ' | '.join(errors) + ' |')
    mass, com, _ = PAYLOAD
    print(f'\npayload from currents (true {mass:g} kg at {list(com)} m):')
    for tag in ('description', 'known load'):
        if tag not in rows:
            continue
        r = run('identify', '--urdf', f'{d}/{tag[0]}.urdf', '--params-in', f'{d}/{tag[0]}.yaml',
                '--payload', link, '--effort-units', 'current', f'{d}/payload.csv',
                '--params-out', f'{d}/payload_{tag[0]}.yaml')
        if r.returncode:
            print(f'  with the {tag} gains: refused: {r.stderr}')
            continue
        with open(f'{d}/payload_{tag[0]}.yaml') as f:
            v = yaml.safe_load(f)['/**']['ros__parameters']
        c = np.array(v['payload.com'])
        print(f'  with the {tag} gains: {v["payload.mass"]:.4g} kg '
              f'({100 * (v["payload.mass"] / mass - 1):+.2f} %), centre of mass '
              f'{np.round(100 * c, 2).tolist()} cm ({1e3 * np.abs(c - com).max():.1f} mm off)')


if __name__ == '__main__':
    main()
