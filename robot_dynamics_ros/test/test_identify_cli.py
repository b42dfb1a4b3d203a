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
``robot-dynamics identify`` and ``excite`` as a user runs them: bags in, corrected files out.

Bags are written with rosbags' writer in both storage formats (MCAP, what ``ros2 bag record``
writes by default, and sqlite3). The corrected description must load in RobotModel and in
Pinocchio and reproduce the identified torques; bad input must give exit status 2, a message
naming the problem and no output file.
"""
import os
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest
import yaml

from robot_dynamics_ros.dynamics import RobotModel
from robot_dynamics_ros.tools.recordings import read

from conftest import HANG_GUARD, ROBOTS, erd_root
from identification_data import recording, true_arm, write_bag
from test_identification import NOISE, fourier

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

CLI = [sys.executable, '-m', 'robot_dynamics_ros.tools.cli']


def run(*args):
    return subprocess.run(CLI + [str(a) for a in args], capture_output=True, text=True,
                          timeout=HANG_GUARD)


@pytest.fixture(scope='module')
def ur5_bags(tmp_path_factory):
    d = tmp_path_factory.mktemp('bags')
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    nominal = RobotModel.from_urdf_file(urdf)
    true = true_arm(nominal)
    write_bag(str(d / 'train'), recording(true, fourier(nominal, 1), 20.0, noise=NOISE), 'mcap')
    write_bag(str(d / 'hold'), recording(true, fourier(nominal, 2, amplitude=0.4), 10.0,
                                         noise=NOISE, seed=5), 'sqlite3')
    return urdf, nominal, true, d


def test_both_storage_formats_read_alike(ur5_bags, tmp_path):
    urdf, nominal, true, d = ur5_bags
    rec = recording(true, fourier(nominal, 3), 2.0)
    for storage in ('mcap', 'sqlite3'):
        write_bag(str(tmp_path / storage), rec, storage)
        back = read(str(tmp_path / storage))
        assert back.names == list(nominal.joint_names)
        np.testing.assert_allclose(back.t, rec.t, atol=1e-9)
        np.testing.assert_array_equal(back.position, rec.position)
        np.testing.assert_array_equal(back.effort, rec.effort)
        single = [f for f in os.listdir(tmp_path / storage) if f.endswith(('.mcap', '.db3'))]
        assert len(single) == 1
        again = read(str(tmp_path / storage / single[0]))        # one file, as a user may give
        np.testing.assert_array_equal(again.velocity, rec.velocity)


def test_split_streams_csv_and_missing_velocities(tmp_path):
    """An arm and its last joint on two streams, merged; a CSV; positions only."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    nominal = RobotModel.from_urdf_file(urdf)
    rec = recording(true_arm(nominal), fourier(nominal, 1), 3.0)
    ts = get_typestore(Stores.ROS2_JAZZY)
    JointState, Header, Time = (ts.types[k] for k in (
        'sensor_msgs/msg/JointState', 'std_msgs/msg/Header', 'builtin_interfaces/msg/Time'))
    names = list(rec.names)
    with Writer(tmp_path / 'split', version=9, storage_plugin=StoragePlugin.MCAP) as w:
        c = w.add_connection('/joint_states', JointState.__msgtype__, typestore=ts)
        for k, t in enumerate(rec.t):
            stamp = Time(sec=int(t), nanosec=int(round((t - int(t)) * 1e9)))
            for part in (slice(0, 5), slice(5, 6)):        # the wrist on its own stream, after
                msg = JointState(header=Header(stamp=stamp, frame_id=''), name=names[part],
                                 position=rec.position[k, part], velocity=np.zeros(0),
                                 effort=rec.effort[k, part])
                w.write(c, int(t * 1e9) + part.start,
                        ts.serialize_cdr(msg, JointState.__msgtype__))
    merged = read(str(tmp_path / 'split'))
    assert merged.names == names and merged.velocity is None
    assert 'velocities differentiated from positions' in ' '.join(merged.notes)
    # a sample per message of the wider stream, the wrist at its latest value (one step behind);
    # the first, before the wrist was seen, is dropped
    np.testing.assert_array_equal(merged.position[:, :5], rec.position[1:, :5])
    np.testing.assert_array_equal(merged.position[:, 5], rec.position[:-1, 5])
    assert len(merged.t) == len(rec.t) - 1 and 'before every joint was seen' in merged.notes[0]
    # the same data as CSV
    header = ['time'] + [f'{j}/{w}' for j in names for w in ('position', 'velocity', 'effort')]
    rows = np.column_stack([rec.t] + [x[:, k] for k in range(6)
                                      for x in (rec.position, rec.velocity, rec.effort)])
    np.savetxt(tmp_path / 'rec.csv', rows, delimiter=',', header=','.join(header), comments='')
    csv = read(str(tmp_path / 'rec.csv'))
    np.testing.assert_allclose(csv.position, rec.position, rtol=1e-15)
    np.testing.assert_allclose(csv.velocity, rec.velocity, rtol=1e-15)
    # positions only: identify still works (velocities differentiated), on the CSV too
    r = run('identify', '--urdf', urdf, tmp_path / 'split', tmp_path / 'rec.csv',
            '--report', tmp_path / 'r.yaml')
    assert r.returncode == 0, r.stderr
    notes = yaml.safe_load((tmp_path / 'r.yaml').read_text())['samples']['notes']
    assert any('differentiated' in n for n in notes), notes


def test_identify_writes_files_that_reproduce_the_torques(ur5_bags, tmp_path):
    urdf, nominal, true, d = ur5_bags
    out = {k: tmp_path / f for k, f in (('urdf', 'corrected.urdf'), ('params', 'params.yaml'),
                                        ('report', 'report.yaml'), ('plot', 'identify.png'))}
    r = run('identify', '--urdf', urdf, d / 'train', '--holdout', d / 'hold', '-o', out['urdf'],
            '--params-out', out['params'], '--report', out['report'], '--plot', out['plot'])
    assert r.returncode == 0, r.stderr
    assert all(len(line) <= 100 for line in r.stdout.splitlines()), r.stdout
    report = yaml.safe_load(out['report'].read_text())
    for joint, row in report['rms']['holdout'].items():
        assert row['identified_error'] * 5 <= row['urdf_error'], (joint, row)
        assert (row['identified_error'] <= 0.05 * row['torque']
                or row['identified_error'] <= 0.2), (joint, row)
    assert report['samples']['read'] == 20001 and report['condition_number'] > 1
    # the corrected description: loads here and in Pinocchio, torques as identified
    xml = out['urdf'].read_text()
    corrected = RobotModel.from_urdf(xml)
    params = yaml.safe_load(out['params'].read_text())['/**']['ros__parameters']
    assert params['friction_compensation'] == 1.0 and len(params['armature']) == nominal.n
    np.testing.assert_allclose(corrected.damping, params['damping'])
    pm = pin.buildModelFromXML(xml)
    pd = pm.createData()
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, nominal.n))
    from robot_dynamics_ros.dynamics import rnea
    np.testing.assert_allclose(pin.rnea(pm, pd, q, qd, qdd), rnea(corrected, q, qd, qdd),
                               rtol=1e-9, atol=1e-9)
    # everything but inertials and dynamics kept: the visuals are still there
    assert xml.count('<visual') == open(urdf).read().count('<visual')
    assert out['plot'].stat().st_size > 10000


def test_payload_mode_adds_the_payload_as_a_link(tmp_path):
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    nominal = RobotModel.from_urdf_file(urdf)
    loaded = nominal.with_payload('tool0', 2.0, (0.0, 0.03, 0.1), (0.01, 0.0, 0.0, 0.01, 0.0,
                                                                   0.005))
    write_bag(str(tmp_path / 'bag'), recording(loaded, fourier(nominal, 4), 20.0), 'mcap')
    r = run('identify', '--urdf', urdf, tmp_path / 'bag', '--payload', 'tool0', '-o',
            tmp_path / 'with_payload.urdf', '--params-out', tmp_path / 'p.yaml')
    assert r.returncode == 0, r.stderr
    assert 'payload on tool0: 2 kg' in r.stdout, r.stdout
    params = yaml.safe_load((tmp_path / 'p.yaml').read_text())['/**']['ros__parameters']
    assert params['payload.link'] == 'tool0' and abs(params['payload.mass'] - 2.0) < 1e-3
    corrected = RobotModel.from_urdf_file(str(tmp_path / 'with_payload.urdf'))
    np.testing.assert_allclose(corrected.I, loaded.I, atol=1e-4)


def test_payload_on_an_identified_arm_takes_its_params_file(tmp_path):
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    nominal = RobotModel.from_urdf_file(urdf)
    n = nominal.n
    arm = nominal.with_armature(np.full(n, 0.1))._replace(damping=np.full(n, 0.5),
                                                          friction=np.full(n, 0.8))
    params = {'/**': {'ros__parameters': {'armature': [0.1] * n, 'damping': [0.5] * n,
                                          'friction': [0.8] * n,
                                          'friction_velocity_epsilon': 0.01}}}
    (tmp_path / 'arm.yaml').write_text(yaml.safe_dump(params))
    loaded = arm.with_payload('tool0', 1.5, (0.0, 0.0, 0.05), (0.004, 0.0, 0.0, 0.004, 0.0,
                                                               0.002))
    write_bag(str(tmp_path / 'bag'), recording(loaded, fourier(nominal, 4), 20.0), 'mcap')
    common = ['identify', '--urdf', urdf, tmp_path / 'bag', '--payload', 'tool0']
    r = run(*common, '--params-in', tmp_path / 'arm.yaml', '--params-out', tmp_path / 'p.yaml')
    assert r.returncode == 0, r.stderr
    out = yaml.safe_load((tmp_path / 'p.yaml').read_text())['/**']['ros__parameters']
    right = abs(out['payload.mass'] - 1.5)
    assert right < 1e-3 and out['armature'] == [0.1] * n
    # without the arm's friction and armature the payload takes the blame for them
    r = run(*common, '--report', tmp_path / 'r.yaml')
    wrong = abs(yaml.safe_load((tmp_path / 'r.yaml').read_text())['payload']['mass'] - 1.5)
    assert wrong > 10 * right, (wrong, right)
    bad = run(*common, '--params-in', tmp_path / 'bag', '--report', tmp_path / 'x.yaml')
    assert bad.returncode == 2 and '--params-in' in bad.stderr


@pytest.mark.parametrize('command', ['identify', 'excite'])
def test_help_keeps_the_usage_lines_apart(command):
    """--help shows the usage lines of the module's text one per line (not run into one)."""
    r = run(command, '--help')
    assert r.returncode == 0, r.stderr
    lines = [line.strip() for line in r.stdout.splitlines()]
    assert any(line.startswith('robot-dynamics excite --urdf') for line in lines), r.stdout
    assert sum(line.startswith('robot-dynamics identify --urdf') for line in lines) == 2
    assert '``' not in r.stdout


def test_list_base_parameters():
    r = run('identify', '--urdf', os.path.join(erd_root(), ROBOTS['ur5']),
            '--list-base-parameters')
    assert r.returncode == 0, r.stderr
    assert '58 base parameters of 84' in r.stdout      # 52 + 6 offsets
    assert 'change no torque' in r.stdout and 'shoulder_link.m' in r.stdout
    assert all(len(line) <= 100 for line in r.stdout.splitlines())


def bad_bags(tmp_path, nominal, true):
    rec = recording(true, fourier(nominal, 1), 5.0)
    write_bag(str(tmp_path / 'other_topic'), rec, topic='/arm/joint_states')
    write_bag(str(tmp_path / 'no_effort'), rec, with_effort=False)
    rec_nan = recording(true, fourier(nominal, 1), 5.0)
    rec_nan.position[1500, 1] = np.nan
    write_bag(str(tmp_path / 'nan'), rec_nan)
    renamed = recording(true, fourier(nominal, 1), 5.0)
    renamed.names = [f'x_{j}' for j in renamed.names]
    write_bag(str(tmp_path / 'renamed'), renamed)
    still = recording(true, fourier(nominal, 1), 5.0)
    still.position[:] = still.position[0]
    still.velocity[:] = 0.0
    write_bag(str(tmp_path / 'still'), still)
    gap = recording(true, fourier(nominal, 1), 5.0)
    keep = np.abs(gap.t - 102.0) > 0.3
    for k in ('t', 'position', 'velocity', 'effort'):
        setattr(gap, k, getattr(gap, k)[keep])
    write_bag(str(tmp_path / 'gap'), gap)
    short = recording(true, fourier(nominal, 1), 0.05)
    write_bag(str(tmp_path / 'short'), short)
    current = recording(true, fourier(nominal, 1), 10.0)
    current.effort = current.effort / np.array([12.0, 30.0, 25.0, 9.0, 8.0, 7.0])  # in A
    write_bag(str(tmp_path / 'current'), current)
    zero = recording(true, fourier(nominal, 1), 10.0)
    zero.effort[:, 3] = 0.0                     # wrist_1's driver reports nothing
    write_bag(str(tmp_path / 'zero'), zero)
    rezeroed = recording(true, fourier(nominal, 1), 10.0, noise=NOISE)
    rezeroed.effort[rezeroed.t > 106.0, 2] += 1.0     # elbow's sensor re-zeroed at 6 s
    write_bag(str(tmp_path / 'rezeroed'), rezeroed)
    flipped = recording(true, fourier(nominal, 1), 10.0)
    flipped.effort = flipped.effort / 10.0
    flipped.effort[:, 1] *= -1.0                # shoulder_lift's current of the other sign
    write_bag(str(tmp_path / 'flipped'), flipped)


@pytest.mark.parametrize('bag, extra, match', [
    ('other_topic', [], 'no topic /joint_states in the bag'),
    ('no_effort', [], 'carry no effort: give --effort-topic'),
    ('nan', [], 'position of joint shoulder_lift_joint is not finite'),
    ('renamed', [], 'are not in the recording'),
    ('still', [], 'too little excitation'),
    ('gap', [], 'a gap of 0.60. s'),
    ('short', [], 'too few|too short'),
    ('missing', [], 'no such file'),
    ('other_topic', ['--effort-topic', '/torques'], 'no topic'),
    ('other_topic', ['--urdf', '/nonexistent.urdf'], 'nonexistent'),
    ('current', [], r'joint shoulder_pan_joint: its efforts are 0.1.. x the torques .* '
                    r'--effort-units current'),
    ('zero', ['--effort-units', 'current'], r"joint\(s\) \['wrist_1_joint'\] is zero"),
    # (part of a step is taken up by the fit: 0.6 of 1 N m seen in these 10 s)
    ('rezeroed', [], r'offset changed .*joint elbow_joint by \+0\.[5-9].* N m at t = 6\.0 s'),
    ('flipped', ['--effort-units', 'current'], 'joint shoulder_lift_joint: the torque per effort '
                                               'unit comes out -'),
])
def test_bad_input_exits_2_with_the_reason_and_writes_nothing(tmp_path, bag, extra, match):
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    nominal = RobotModel.from_urdf_file(urdf)
    bad_bags(tmp_path, nominal, true_arm(nominal))
    outputs = [tmp_path / 'out' / f for f in ('c.urdf', 'p.yaml', 'r.yaml', 'i.png')]
    os.makedirs(tmp_path / 'out')
    args = ['--urdf', urdf] + extra if '--urdf' not in extra else extra
    r = run('identify', *args, tmp_path / bag, '-o', outputs[0], '--params-out', outputs[1],
            '--report', outputs[2], '--plot', outputs[3])
    assert r.returncode == 2, (r.stdout, r.stderr)
    import re
    assert re.search(match, r.stderr.replace('\n  ', ' ')), r.stderr
    assert 'Traceback' not in r.stderr
    assert os.listdir(tmp_path / 'out') == []


def test_known_gains_turn_currents_into_torques_and_are_carried(tmp_path):
    """--params-in with effort_gain: no gains identified, the params file keeps them."""
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    nominal = RobotModel.from_urdf_file(urdf)
    gains = [12.0, 30.0, 25.0, 9.0, 8.0, 7.0]
    rec = recording(true_arm(nominal), fourier(nominal, 1), 20.0, noise=NOISE)
    rec.effort = rec.effort / np.array(gains)
    write_bag(str(tmp_path / 'bag'), rec)
    (tmp_path / 'known.yaml').write_text(yaml.safe_dump(
        {'/**': {'ros__parameters': {'effort_gain': gains}}}))
    args = ['identify', '--urdf', urdf, tmp_path / 'bag', '--params-in', tmp_path / 'known.yaml',
            '--params-out', tmp_path / 'p.yaml']
    r = run(*args)
    assert r.returncode == 2 and 'say --effort-units current' in r.stderr.replace('-\n  ', '-'), \
        r.stderr
    r = run(*args, '--effort-units', 'current')
    assert r.returncode == 0, r.stderr
    assert 'torque per effort unit of' not in r.stdout        # known, not identified
    params = yaml.safe_load((tmp_path / 'p.yaml').read_text())['/**']['ros__parameters']
    assert params['effort_gain'] == gains and len(params['torque_offset']) == nominal.n


def test_effort_from_the_controllers_torques_topic(tmp_path):
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    nominal = RobotModel.from_urdf_file(urdf)
    rec = recording(true_arm(nominal), fourier(nominal, 1), 20.0)
    write_bag(str(tmp_path / 'bag'), rec, with_effort=False,
              effort_topic='/inverse_dynamics_controller/torques')
    back = read(str(tmp_path / 'bag'), effort_topic='/inverse_dynamics_controller/torques')
    # a command acts until the next state: the effort at a state is the mean of the commands
    # answering it and the state before
    np.testing.assert_array_equal(back.effort[0], rec.effort[0])
    np.testing.assert_allclose(back.effort[1:], 0.5 * (rec.effort[:-1] + rec.effort[1:]),
                               rtol=1e-15)
    r = run('identify', '--urdf', urdf, tmp_path / 'bag', '--effort-topic',
            '/inverse_dynamics_controller/torques', '--report', tmp_path / 'r.yaml')
    assert r.returncode == 0, r.stderr


def test_excite_writes_a_feasible_trajectory_that_check_accepts(tmp_path):
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    r = run('excite', '--urdf', urdf, '-o', tmp_path / 'excite.yaml')
    assert r.returncode == 0, r.stderr
    assert 'condition number' in r.stdout and 'feasible' in r.stdout
    check = run('check', '--urdf', urdf, tmp_path / 'excite.yaml')
    assert check.returncode == 0, check.stdout + check.stderr
    doc = yaml.safe_load((tmp_path / 'excite.yaml').read_text())
    model = RobotModel.from_urdf_file(urdf)
    q = np.array([p['positions'] for p in doc['points']])
    lo, hi = model.position_limits.T
    assert np.all(q >= lo) and np.all(q <= hi)
    np.testing.assert_allclose(doc['points'][0]['velocities'], 0, atol=1e-12)
    bad = run('excite', '--urdf', urdf, '--duration', '15', '-o', tmp_path / 'x.yaml')
    assert bad.returncode == 2 and 'whole number of periods' in bad.stderr
    assert not (tmp_path / 'x.yaml').exists()


def test_the_waypoints_give_back_the_series_as_the_controller_samples_them():
    from robot_dynamics_ros.control.trajectory import JointTrajectory
    from robot_dynamics_ros.tools.identify import WAYPOINT_RATE
    model = RobotModel.from_urdf_file(os.path.join(erd_root(), ROBOTS['ur5']))
    series = fourier(model, 3, amplitude=0.8)
    t, q, qd, qdd = series.waypoints(20.0, WAYPOINT_RATE)
    traj = JointTrajectory(list(model.joint_names), t, q, qd, qdd, start_time=0.0, q0=q[0])
    dense = np.linspace(0, 20, 20001)
    ours = traj.sample_relative(dense, np.zeros(len(dense), bool))
    exact = series.sample(dense)
    assert np.abs(ours[0] - exact[0]).max() < 1e-5          # rad
    assert np.abs(ours[1] - exact[1]).max() < 1e-3          # rad/s
    assert np.abs(exact[0]).max() > 0.5


@pytest.mark.distro      # the nodes import rclpy
def test_nodes_do_not_load_the_identification_dependencies():
    def loaded(imports):
        code = (f'import sys; import {imports}; '
                'print(sorted(m for m in ("scipy", "cvxpy", "rosbags") if m in sys.modules))')
        r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                           timeout=HANG_GUARD)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()
    # numba itself imports scipy when it is installed (for its linalg support): not ours to avoid
    baseline = loaded('numba')
    assert baseline in ("[]", "['scipy']")
    assert loaded('robot_dynamics_ros.nodes.feedforward_node, '
                  'robot_dynamics_ros.nodes.simulator_node') == baseline
