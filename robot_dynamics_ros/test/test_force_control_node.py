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
Force control over DDS: feedforward_node presses ur5's probe on simulator_node's table.

ur5 with a probe (a 0.2 kg link with a 2 cm sphere on a fixed joint, where the simulated
force/torque sensor sits), a table 2 cm under it from a world file, in lockstep (the same steps
on a busy machine). cartesian_impedance with root z force-controlled: asked 10 N down on
~/target_wrench, the table carries 10 N (the sensor as force_torque_sensor_broadcaster
publishes it; then the observer); ~/zero_ft_sensor zeroes the bias at rest. Force axes in a
mode without task control, or not 0/1, stop the node with the parameter named.
"""
import os
import threading
import time

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from robot_dynamics_msgs.msg import Contacts  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from robot_dynamics_ros.dynamics import RobotModel  # noqa: E402
from robot_dynamics_ros.dynamics.energy import body_poses  # noqa: E402
from robot_dynamics_ros.simulation.geometry import arm_geometry  # noqa: E402

from conftest import erd_root, robot_urdf  # noqa: E402
from ros_harness import (DrainingExecutor, NodeProcess, ros_list, set_parameters,  # noqa: E402
                         spin_lean)

Q0 = [0.0, -1.0, 1.8, -2.4, -1.57, 0.0]
PROBE = '''<joint name="probe_joint" type="fixed"><parent link="ee_link"/><child link="probe"/>
<origin xyz="0.06 0 0"/></joint><link name="probe"><inertial><mass value="0.2"/>
<inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
<collision><geometry><sphere radius="0.02"/></geometry></collision></link></robot>'''
CTRL = 'inverse_dynamics_controller'


pytestmark = pytest.mark.usefixtures('ros')      # conftest.ros: rclpy for the module


def setup_files(tmp_path):
    """Write ur5 with the probe and a world with a table 2 cm under the probe; return paths."""
    xml = robot_urdf('ur5').replace('</robot>', PROBE)
    urdf = tmp_path / 'ur5_probe.urdf'
    urdf.write_text(xml)
    model = RobotModel.from_urdf(xml)
    meshes = [erd_root().rsplit('/', 2)[0]]
    g = arm_geometry(model, xml, meshes)
    poses = body_poses(model, np.array(Q0))
    probe = g.links.index('probe')
    (b, x, r), = [(b, x, r) for b, x, r, k in zip(g.body, g.points, g.radius, g.link)
                  if k == probe]
    low = poses[b][0] @ x + poses[b][1] - [0, 0, r]
    world = tmp_path / 'table.yaml'
    world.write_text(f'shapes: [{{name: table, type: box, size: [0.5, 0.5, 0.1], '
                     f'xyz: [{low[0]}, {low[1]}, {low[2] - 0.07}]}}]\n')
    return str(urdf), str(world), meshes[0]


def test_the_probe_presses_ten_newtons_on_the_table_with_the_sensor_then_the_observer(tmp_path):
    urdf, world, meshes = setup_files(tmp_path)
    ns = '/force'
    sim = NodeProcess('simulator_node', [
        '-r', f'__ns:={ns}', '-p', f'urdf_file:={urdf}', '-p', f'world_file:={world}',
        '-p', f'mesh_package_paths:=[{meshes}]', '-p', 'ft_sensor.joint:=probe_joint',
        '-p', f'initial_positions:={ros_list(Q0)}', '-p', 'lockstep:=true',
        '-p', 'command_timeout:=0.5'], tmp_path / 'sim.log')
    ctrl = NodeProcess('feedforward_node', [
        '-r', f'__ns:={ns}', '-p', f'urdf_file:={urdf}', '-p', 'mode:=cartesian_impedance',
        '-p', 'task.frame:=probe', '-p', 'task.force_axes:=[0, 0, 1, 0, 0, 0]',
        '-p', 'use_sim_time:=true', '-p', 'state_timeout:=0.5'], tmp_path / 'ctrl.log')
    node = rclpy.create_node('force_peer', namespace=ns)
    executor = DrainingExecutor()
    executor.add_node(node)
    contacts, states, readings = [], [], []
    node.create_subscription(Contacts, 'dynamics_simulator/contacts', contacts.append, 1000)
    node.create_subscription(JointState, 'joint_states', states.append, 1000)
    node.create_subscription(WrenchStamped, 'force_torque_sensor_broadcaster/wrench',
                             readings.append, 1000)
    target = node.create_publisher(WrenchStamped, f'{CTRL}/target_wrench', 10)
    zero = node.create_client(Trigger, f'{CTRL}/zero_ft_sensor')
    spinning = [True]

    def spin():
        spin_lean(executor, lambda: spinning[0])
    thread = threading.Thread(target=spin, daemon=True)
    thread.start()

    def wait(predicate, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end and not predicate():
            time.sleep(0.02)
        return predicate()

    def table_force():
        return sum(f.z for f, s in zip(contacts[-1].force, contacts[-1].shape) if s == 'table') \
            if contacts else 0.0

    def press(newtons):
        msg = WrenchStamped()
        msg.wrench.force.z = -newtons
        target.publish(msg)

    def settled_near(newtons, band, timeout):
        """Wait until the table's force stays within ``band`` for 0.5 s of simulated time."""
        end = time.monotonic() + timeout
        since = None
        while time.monotonic() < end:
            press(newtons)
            time.sleep(0.05)
            if not contacts:
                continue
            t = contacts[-1].header.stamp.sec + 1e-9 * contacts[-1].header.stamp.nanosec
            if abs(table_force() - newtons) <= band:
                since = t if since is None else since
                if t - since >= 0.5:
                    return True
            else:
                since = None
        return False
    try:
        assert ctrl.wait_log('ready in', 60), ctrl.log()[-2000:]
        assert wait(lambda: len(states) > 100 and len(readings) > 100, 60), \
            (len(states), len(readings), sim.log()[-2000:])
        assert 'force/torque sensor at probe_joint (frame probe' in sim.log()
        # at rest in the air: the sensor reads the probe's weight; zeroing takes it out
        assert zero.wait_for_service(timeout_sec=20)
        future = zero.call_async(Trigger.Request())     # the executor's thread spins the node
        assert wait(future.done, 20)
        result = future.result()
        assert result.success and '0.2 kg below probe' in result.message, result.message
        assert settled_near(10.0, 0.3, 90), (table_force(), ctrl.log()[-3000:])
        # the observer's estimate instead of the sensor, at runtime
        from rclpy.parameter_client import AsyncParameterClient
        params = AsyncParameterClient(node, CTRL)
        result = set_parameters(params, wait, {'force.source': 'observer'})
        assert result.results[0].successful, result
        assert settled_near(10.0, 1.0, 90), (table_force(), ctrl.log()[-3000:])
        assert 'Traceback' not in ctrl.log() + sim.log()
    finally:
        spinning[0] = False
        thread.join(timeout=5)
        node.destroy_node()
        ctrl.stop()
        sim.stop()


@pytest.mark.parametrize('args, says', [
    (['-p', 'mode:=computed_torque', '-p', 'task.force_axes:=[0, 0, 1, 0, 0, 0]'],
     'task.force_axes selects force axes but mode "computed_torque" has no task control'),
    (['-p', 'mode:=cartesian_impedance', '-p', 'task.force_axes:=[0, 0, 2, 0, 0, 0]'],
     'task.force_axes needs six 0/1 values'),
    (['-p', 'mode:=cartesian_impedance', '-p', 'force.source:=magic'],
     "force.source must be one of ('sensor', 'observer')"),
    (['-p', 'mode:=cartesian_impedance', '-p', 'force.max_speed:=[0.0, 0.5]'],
     'force.max_speed needs 2 values (one per bound: m/s, rad/s), each finite > 0'),
])
def test_bad_force_settings_stop_the_node_naming_them(tmp_path, args, says):
    proc = NodeProcess('feedforward_node', ['-r', '__ns:=/badforce', *args],
                       tmp_path / 'bad.log')
    try:
        proc.proc.wait(timeout=60)
        assert proc.proc.returncode != 0
        assert says in proc.log() and 'Traceback' not in proc.log(), proc.log()[-2000:]
    finally:
        proc.stop()


def test_the_press_demo_presses_and_slides(tmp_path):
    """``closed-loop-demo --press``'s run, as the force control tutorial shows it."""
    from robot_dynamics_ros.nodes.closed_loop import run_press
    rclpy.shutdown()                # run_press has its own context
    try:
        urdf = os.path.join(erd_root(), 'ur_description/urdf/ur5_robot.urdf')
        # this process stalls for 1 s as the slide starts, as a busy core stalls it
        res = run_press(urdf, Q0, flange='ee_link', offset=(0.06, 0.0, 0.0),
                        mesh_paths=[erd_root().rsplit('/', 2)[0]], log_dir=str(tmp_path),
                        stall=(2.2, 1.0))
    finally:
        rclpy.init()
    assert abs(res['steady'] - 10.0) <= 0.3, res['steady']
    # the slide's targets stream at 100 Hz of simulated time, the simulator paused between
    # them (closed_loop.py's paced stream), and the controller times the target streams in
    # simulated time (ControlLoop.arm_time): 9.81-10.10 N idle, beside two busy cores, and with
    # the stall (1 s at 2.2 s, or 0.5 s, or 0.8 s at 4 s). Free-running, this process fell
    # behind the simulation under load: fresh-clone CI beside the offline suite read 0.0-19.2 N
    # and the test only warned; the stall above made 0.0-10.9 N (0.5 s: 6.4-10.8 N)
    lo, hi = res['slide']
    t, f = res['t'], res['table']
    sliding = (t >= 2.0) & (t <= 6.5)
    worst = t[sliding][np.argmax(np.abs(f[sliding] - 10.0))]
    assert 8.5 <= lo and hi <= 11.5, (f'the force while sliding read {lo:.2f}-{hi:.2f} N, '
                                      f'furthest from 10 N at {worst:.3f} s of simulated time; '
                                      f'logs in {tmp_path}')
    assert res['pose'][-1, 0] - res['pose'][0, 0] == pytest.approx(0.2, abs=0.01)
    assert '0.2 kg below probe' in res['zeroed']
