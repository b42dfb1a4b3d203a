"""ament_flake8 over the package, as `ros2 pkg create --build-type ament_python` sets it up (the
ament configuration: line length 99). Run on the package sources, tests and launch files."""
import os

import pytest
from ament_flake8.main import main_with_errors

from ros_harness import PACKAGE


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    parts = ('robot_dynamics_ros', 'test', 'launch', 'setup.py')
    paths = [os.path.join(PACKAGE, p) for p in parts]
    rc, errors = main_with_errors(argv=paths)
    assert rc == 0, f'Found {len(errors)} code style errors / warnings:\n' + '\n'.join(errors)
