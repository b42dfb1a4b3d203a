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

"""The `robot-dynamics` console script, as installed."""
import os
import subprocess

import pytest

from conftest import executable, HANG_GUARD

pytestmark = pytest.mark.offline      # no ROS process (conftest.PART)


def cli():
    return executable('robot-dynamics')


def run(*args):
    return subprocess.run([cli(), *args], capture_output=True, text=True, timeout=HANG_GUARD)


def test_torques_on_the_shipped_2r_arm(tmp_path):
    png = tmp_path / 'split.png'
    r = run('torques', '--plot', str(png), '--rows', '3')
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.strip().startswith(('0.000', '2.000'))]
    assert len(rows) == 2
    # start: q1 up, link 2 folded down -> no torque; end: (m1 L1/2 + m2 L1) g = 98.10 N m
    first, last = ([float(x) for x in row.replace('|', ' ').split()] for row in rows)
    assert first[2] == 0.0 and first[7] == 0.0
    assert last[2] == pytest.approx(98.10, abs=0.01) and last[5] == pytest.approx(98.10, abs=0.01)
    assert png.stat().st_size > 10_000 and png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_torques_on_another_urdf(tmp_path):
    from conftest import ROBOTS, erd_root
    r = run('torques', '--urdf', os.path.join(erd_root(), ROBOTS['ur5']), '--duration', '1')
    assert r.returncode == 0, r.stderr
    assert 'shoulder_pan_joint' in r.stdout and 'peak |tau|' in r.stdout


@pytest.mark.parametrize('args, code, message', [
    (['torques', '--start', '1', '2', '3'], 2, '--start needs 2 values'),
    (['torques', '--duration', '-1'], 2, '--duration must be a positive'),
    (['torques', '--samples', '1'], 2, '--samples must be at least 2'),
    (['torques', '--urdf', '/nonexistent.urdf'], 1, 'cannot read URDF file'),
    (['torques', '--plot', '/nonexistent-dir/x.png'], 1, 'cannot write'),
    (['frobnicate'], 2, 'invalid choice'),
])
def test_bad_arguments_exit_nonzero_with_a_message(args, code, message):
    r = run(*args)
    assert r.returncode == code
    assert message in r.stderr
    assert 'Traceback' not in r.stderr


def test_bad_urdf_content(tmp_path):
    bad = tmp_path / 'bad.urdf'
    bad.write_text('<robot name="x"><link name="a"/></robot>')
    r = run('torques', '--urdf', str(bad))
    assert r.returncode == 1 and 'no movable joint' in r.stderr


def test_info_describes_joints_masses_ros2_control_and_warnings(tmp_path):
    from conftest import ROBOTS, erd_root
    r = run('info', '--urdf', os.path.join(erd_root(), ROBOTS['panda']))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert lines[0].startswith('robot "panda": 9 movable joints, root link "panda_link0"')
    joint_lines = [line.split() for line in lines if line[:3].strip().isdigit()]
    assert [j[1] for j in joint_lines][:3] == ['panda_joint1', 'panda_joint2', 'panda_joint3']
    assert joint_lines[7][1:3] == ['panda_finger_joint1', 'prismatic']
    assert 'position [-3.072, -0.0698] rad  velocity 2.175 rad/s  effort 87 N m' in r.stdout
    assert 'panda_link1 4.971,' in r.stdout
    assert 'no <ros2_control> block' in r.stdout
    assert 'mimics "panda_finger_joint1"' in r.stdout
    from test_every_description import stack_description
    urdf = tmp_path / 'stack.urdf'
    urdf.write_text(stack_description()[1])
    r = run('info', '--urdf', str(urdf))
    assert r.returncode == 0, r.stderr
    assert 'ros2_control effort command joints (the command order):\n  joint2, joint1' in r.stdout
    assert 'warnings of loading: none' in r.stdout


def test_info_on_a_refused_description():
    from conftest import erd_root
    r = run('info', '--urdf',
            os.path.join(erd_root(), 'romeo_description/urdf/romeo_laas_small.urdf'))
    assert r.returncode == 1 and 'link "body" has an <inertia>' in r.stderr
    assert 'Traceback' not in r.stderr


NOTES_2R = os.path.join(os.path.dirname(__file__), '..', 'trajectories', 'planar_2r_quintic.yaml')


def peak_velocity_scale(duration):
    """k* of the notes' quintic when joint2's velocity limit (6 rad/s) is what binds."""
    # a rest-to-rest quintic peaks at 15/8 of the mean velocity; joint2 moves 270 deg
    return 15 / 8 * (1.5 * 3.141592653589793) / duration / 6.0


def test_check_the_lecture_notes_2r_quintic(tmp_path):
    """m1 = 10 kg, m2 = 5 kg; q1 90 -> 0 deg, q2 -180 -> 90 deg in 2 s: feasible, in 1 s not."""
    png = tmp_path / 'check.png'
    r = run('check', NOTES_2R, '--plot', str(png))
    assert r.returncode == 0, r.stderr
    assert all(len(line) <= 100 for line in r.stdout.splitlines()), r.stdout
    k = float(r.stdout.split('k* = ')[1].split(':')[0])
    assert k == pytest.approx(peak_velocity_scale(2.0), rel=1e-5)
    assert 'feasible; it could run' in r.stdout and 'velocity limit of joint2' in r.stdout
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()
            if line.startswith('joint')}
    # at the end the arm is straight out: (m1 L1/2 + m2 (L1 + L2/2)) g = 117.72 N m would be the
    # most, but it ends with q2 = 90 deg: (m1 L1 / 2 + m2 L1) g = 98.10 N m; the peak is mid-way
    assert 98.10 <= float(rows['joint1'][1]) < 117.72
    assert float(rows['joint1'][3]) == 400 and float(rows['joint2'][3]) == 200
    assert png.stat().st_size > 10_000
    fast = tmp_path / 'fast.json'
    fast.write_text('{"joint_names": ["joint1", "joint2"], "start": {"positions": '
                    '[1.5707963267948966, -3.141592653589793]}, "points": [{"positions": '
                    '[0.0, 1.5707963267948966], "velocities": [0, 0], "accelerations": [0, 0], '
                    '"time_from_start": {"sec": 1, "nanosec": 0}}]}')
    r = run('check', str(fast))
    assert r.returncode == 1, r.stdout + r.stderr
    k = float(r.stdout.split('k* = ')[1].split(':')[0])
    assert k == pytest.approx(peak_velocity_scale(1.0), rel=1e-5) and 'infeasible' in r.stdout


def test_check_a_payload_gravity_cannot_carry():
    """
    32 kg at the elbow: near the end (link 1 level, link 2 up) gravity alone needs 412 N m.

    That is (m1 L1 / 2 + m2 L1 + 32 L1) g = (5 + 5 + 32) 9.81 at joint1, over its 400 N m.
    """
    r = run('check', NOTES_2R, '--payload', 'link2', '32')
    assert r.returncode == 1, r.stdout + r.stderr
    assert 'k* = inf' in r.stdout and 'gravity alone' in r.stdout and 'joint1' in r.stdout


@pytest.mark.parametrize('content, message', [
    ('joint_names: [joint1]\n', 'needs joint_names and points'),
    ('joint_names: [joint9]\npoints: [{positions: [0], time_from_start: 1}]\n',
     'unknown joints'),
    ('joint_names: [joint1]\npoints: [{positions: [0], velocities: [0], time_from_start: 1},'
     ' {positions: [1], time_from_start: 2}]\n', 'some points have velocities'),
    ('joint_names: [joint1]\npoints: [{positions: [0], time_from_start: 2},'
     ' {positions: [1], time_from_start: 1}]\n', 'strictly increasing'),
    ('joint_names: [joint1]\npoints: [{positions: [0], time_from_start: soon}]\n',
     'time_from_start must be seconds'),
    ('{{ not yaml', 'is not YAML or JSON'),
])
def test_check_refuses_bad_files_with_exit_2(tmp_path, content, message):
    path = tmp_path / 'traj.yaml'
    path.write_text(content)
    r = run('check', str(path))
    assert r.returncode == 2 and message in r.stderr, (r.returncode, r.stderr)


def test_fk_prints_pinocchios_pose_and_jacobian():
    import re

    import numpy as np
    import pinocchio as pin

    from conftest import ROBOTS, erd_root
    urdf = os.path.join(erd_root(), ROBOTS['panda'])
    q = [0.1, -0.5, 0.2, -2.0, 0.3, 1.6, 0.8, 0.01, 0.02]
    r = run('fk', '--urdf', urdf, '--frame', 'panda_hand', '--q', *map(str, q), '--jacobian',
            '--reference', 'world')
    assert r.returncode == 0, r.stderr
    numbers = [float(x) for x in re.findall(r'-?\d+\.\d+', r.stdout.split('\n', 1)[1])]
    pm = pin.buildModelFromUrdf(urdf)
    pd = pm.createData()
    fid = pm.getFrameId('panda_hand', pin.BODY)
    pin.framesForwardKinematics(pm, pd, np.array(q))
    T = pd.oMf[fid]
    J = pin.computeFrameJacobian(pm, pd, np.array(q), fid, pin.WORLD)
    x, y, z, w = pin.Quaternion(T.rotation).coeffs()
    ours = np.array(numbers)
    expected = np.concatenate([T.translation, T.rotation.ravel(), [x, y, z, w], J.ravel()])
    sign = 1.0 if np.sign(ours[12 + 3]) == np.sign(w) else -1.0     # q and -q: one rotation
    ours[12:16] *= sign
    assert ours.shape == expected.shape and np.abs(ours - expected).max() < 2e-6
    assert 'frames, with the joint that moves each' in run('info', '--urdf', urdf).stdout
    bad = run('fk', '--urdf', urdf, '--frame', 'panda_hnd')
    assert bad.returncode == 2 and 'is not a link of panda' in bad.stderr
