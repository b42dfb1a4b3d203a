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

"""ament_pep257 over the package, as `ros2 pkg create --build-type ament_python` sets it up."""
import os

import pytest
from ament_pep257.main import main

pytestmark = pytest.mark.offline      # no ROS process (conftest.PART)

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # robot_dynamics_ros/

ROOT = os.path.dirname(PACKAGE)


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257():
    parts = [os.path.join(PACKAGE, p)
             for p in ('robot_dynamics_ros', 'test', 'launch', 'doc', 'setup.py')]
    rc = main(argv=parts + [os.path.join(ROOT, 'bench')])
    assert rc == 0, 'Found code style errors / warnings'
