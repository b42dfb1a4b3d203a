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
simulator_node's world and force/torque sensor in its own process over real rclpy.

panda falls onto a table from a world file: ~/contacts carries what touches, the wrist sensor
publishes as force_torque_sensor_broadcaster does; the table is taken away at runtime and the
arm falls through where it was; a world file that does not load is refused at runtime (the old
world kept) and at start-up (the node exits naming it), as is a sensor joint that is not a
fixed joint of the description.
"""
import os

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

from geometry_msgs.msg import WrenchStamped  # noqa: E402
from robot_dynamics_msgs.msg import Contacts  # noqa: E402

from conftest import ROBOTS, erd_root  # noqa: E402
from ros_harness import NodeProcess, Peer  # noqa: E402

TABLE = 'shapes:\n  - {name: table, type: box, size: [2, 2, 0.1], xyz: [0, 0, -0.15]}\n'


def panda_args(world, *more):
    root = erd_root()
    return ['-r', '__ns:=/ctest', '-p', f'urdf_file:={os.path.join(root, ROBOTS["panda"])}',
            '-p', f'world_file:={world}', '-p', f'mesh_package_paths:=[{root.rsplit("/", 2)[0]}]',
            '-p', 'hold_until_command:=false', *more]


def test_the_arm_lands_on_the_table_the_sensor_reads_and_the_table_goes(ros, tmp_path):
    world = tmp_path / 'world.yaml'
    world.write_text(TABLE)
    proc = NodeProcess('simulator_node', panda_args(world, '-p',
                                                    'ft_sensor.joint:=panda_hand_joint'),
                       tmp_path / 'sim.log')
    peer = Peer('contact_peer', target='ctest/dynamics_simulator')
    contacts, wrenches = [], []
    peer.node.create_subscription(Contacts, '/ctest/dynamics_simulator/contacts',
                                  contacts.append, 10)
    peer.node.create_subscription(WrenchStamped, '/ctest/force_torque_sensor_broadcaster/wrench',
                                  wrenches.append, 10)
    try:
        assert proc.wait_log('box "table"', 60), proc.log()
        # logged after the world's line: waited for too (read at once, a busy core's CI saw
        # the log without it yet)
        assert proc.wait_log('force/torque sensor at panda_hand_joint (frame panda_hand', 10), \
            proc.log()
        assert peer.spin_until(lambda: any(m.link for m in contacts), 20), proc.log()
        peer.spin(2.0)                          # lands and settles
        last = contacts[-1]
        assert last.header.frame_id == 'panda_link0' and set(last.shape) == {'table'}
        assert sum(f.z for f in last.force) > 10.0          # the table carries some weight
        assert wrenches and wrenches[-1].header.frame_id == 'panda_hand'
        # published with the joint state, stamped alike: the later stream holds the latest
        # stamp of the other. (Not a fixed one of the wrenches: in a fresh-clone CI with both
        # distributions' tests and another load at once, the peer received the contacts 3 s
        # behind the wrenches, whose second latest stamp was then in none of them yet)

        def stamps(msgs):
            return {(m.header.stamp.sec, m.header.stamp.nanosec) for m in msgs}

        def paired():
            c, w = stamps(contacts), stamps(wrenches)
            return min(max(c), max(w)) in c & w
        assert peer.spin_until(paired, 10), (max(stamps(contacts)), max(stamps(wrenches)))
        # the hand's weight (0.76 kg with its fingers) at least, or the table's push on it
        w = wrenches[-1].wrench.force
        assert np.linalg.norm([w.x, w.y, w.z]) > 5.0
        # a world file that does not load is refused and the table stays
        bad = tmp_path / 'bad.yaml'
        bad.write_text('shapes: [{name: table, type: box, size: [1, 1, -1]}]\n')
        (result,) = peer.set_params(world_file=str(bad))
        assert not result.successful and 'size must be > 0' in result.reason
        n = len(contacts)
        peer.spin(0.5)
        assert any(m.link for m in contacts[n:])
        # the table taken away: nothing touches any more, the arm falls through
        empty = tmp_path / 'empty.yaml'
        empty.write_text('shapes: []\n')
        (result,) = peer.set_params(world_file=str(empty))
        assert result.successful, result.reason
        assert peer.spin_until(lambda: contacts and not contacts[-1].link or False, 5) or \
            proc.wait_log('world: none', 1), proc.log()
        assert 'Traceback' not in proc.log()
    finally:
        peer.destroy()
        proc.stop()


@pytest.mark.parametrize('args, says', [
    (['-p', 'ft_sensor.joint:=panda_joint3'],
     'ft_sensor.joint "panda_joint3" is revolute: a force/torque sensor sits at a fixed joint'),
    (['-p', 'ft_sensor.joint:=no_such_joint'],
     'ft_sensor.joint "no_such_joint" is not a joint of panda'),
])
def test_a_sensor_joint_that_is_not_a_fixed_joint_is_refused(ros, tmp_path, args, says):
    # as any model the simulator cannot simulate: the error, no simulation, the node waits for
    # a description it can (test_real_stacks' massless flange)
    world = tmp_path / 'world.yaml'
    world.write_text(TABLE)
    proc = NodeProcess('simulator_node', panda_args(world, *args), tmp_path / 'bad.log')
    try:
        assert proc.wait_log('cannot simulate the model', 60), proc.log()
        assert says in proc.log() and 'Traceback' not in proc.log()
        assert 'simulating "panda"' not in proc.log() and proc.alive()
    finally:
        proc.stop()


def test_a_world_file_that_does_not_load_stops_the_node(ros, tmp_path):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('shapes: [{type: box, size: [1, 1]}]\n')
    proc = NodeProcess('simulator_node', panda_args(bad), tmp_path / 'bad.log')
    try:
        proc.proc.wait(timeout=60)
        assert proc.proc.returncode != 0
        assert (f'invalid parameter: world_file "{bad}": shape "shape0": size must be 3 finite '
                f'numbers') in proc.log()
        assert 'Traceback' not in proc.log()
    finally:
        proc.stop()
