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
ament_flake8 over the package, as `ros2 pkg create --build-type ament_python` sets it up.

The ament configuration (line length 99), run on the package sources, tests, launch files and
the benchmarks (bench/).
"""
import os

import pytest
from ament_flake8.main import main_with_errors

from ros_harness import PACKAGE

pytestmark = pytest.mark.offline      # no ROS process (conftest.PART)


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    parts = ('robot_dynamics_ros', 'test', 'launch', 'doc', 'setup.py')
    # and the benchmarks beside the package, as test_pep257 checks them
    paths = [os.path.join(PACKAGE, p) for p in parts] + [os.path.join(os.path.dirname(PACKAGE),
                                                                      'bench')]
    rc, errors = main_with_errors(argv=paths)
    assert rc == 0, f'Found {len(errors)} code style errors / warnings:\n' + '\n'.join(errors)
