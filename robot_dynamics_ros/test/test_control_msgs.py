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
The control_msgs in use has upstream's type hashes: MoveIt's C++ client and our server agree.

ROS 2 matches an action client with a server by type name and type hash (REP 2011, RIHS01: a
hash of the fields of the type and of every type it contains, not of comments). The figures are
those of upstream control_msgs' own definitions, measured once with each distribution's rosidl
(the files of the control_msgs repository, built as a package into a scratch prefix, and its
generated type-description JSON read): Jazzy from the jazzy branch (5.x), Kilted from 6.8.0,
whose feedback has the index fields that Jazzy's lacks. Where control_msgs is installed from
ROS 2's packages this checks that one; in dev.sh's venv, our stand-in (venv_interfaces/).
"""
import json
import os

import pytest

pytestmark = pytest.mark.offline      # no ROS process (conftest.PART)

UPSTREAM = {
    'jazzy': {
        'control_msgs/action/FollowJointTrajectory':
            'RIHS01_738ebcb7a2d7cfa42f9f1001cc99ce3a4383d1cfe508015d9be8485e4b1c66f6',
        'control_msgs/msg/JointTolerance':
            'RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648',
    },
    'kilted': {
        'control_msgs/action/FollowJointTrajectory':
            'RIHS01_ff29901b2693f5deb847e96084a1c2cdb26e70b7c847be21859b70a55fb29cf0',
        'control_msgs/msg/JointTolerance':
            'RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648',
    },
}


def _distro():
    distro = os.environ.get('ROS_DISTRO', '')
    if distro not in UPSTREAM:
        pytest.skip(f'ROS_DISTRO={distro!r}: upstream hashes measured for {sorted(UPSTREAM)}')
    return distro


@pytest.mark.parametrize('type_name', sorted(UPSTREAM['jazzy']))
def test_the_type_hash_is_upstreams(type_name):
    from ament_index_python.packages import get_package_share_directory
    distro = _distro()
    _, kind, name = type_name.split('/')
    path = os.path.join(get_package_share_directory('control_msgs'), kind, f'{name}.json')
    with open(path, encoding='utf-8') as f:
        hashes = {h['type_name']: h['hash_string'] for h in json.load(f)['type_hashes']}
    assert hashes[type_name] == UPSTREAM[distro][type_name], (path, hashes[type_name])


def test_the_feedback_has_the_distributions_fields():
    from control_msgs.action import FollowJointTrajectory
    fields = FollowJointTrajectory.Feedback.get_fields_and_field_types()
    assert ('index' in fields) == (_distro() == 'kilted'), sorted(fields)
