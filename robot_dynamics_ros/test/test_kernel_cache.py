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
Kernels loaded from numba's cache: the compiled code, found without compiling.

``kernels.load_cached`` (what a node starts with) loads machine code from the cache without
numba's registries of implementations (0.25-0.35 s of imports, needed only to compile). These
tests run fresh processes on a private cache: the first compiles, the second loads, and both must
compute the same torques, reject arrays of other types, and still compile what the cache lacks.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import HANG_GUARD
from test_planar_2r import closed_form

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

# One process of a test: load gravity's kernel from the cache (or compile it: the first run), use
# it, call it with an integer state; in the second run also compile crba's kernel (not cached).
SCRIPT = r'''
import json, sys
import numpy as np
from robot_dynamics_ros.dynamics import RobotModel, crba, example_urdf, gravity_torques, kernels
missing = kernels.load_cached(['gravity_one'])
arm = RobotModel.from_urdf_file(example_urdf('planar_2r'))
q = np.array([0.3, -0.4])
out = {'missing': missing, 'g': gravity_torques(arm, q).tolist()}
try:
    kernels.gravity_one(arm._data, np.zeros(2, dtype=np.int64), np.zeros(2))
    out['int_state'] = 'accepted'
except TypeError:
    out['int_state'] = 'TypeError'
out['registries'] = 'numba.np.linalg' in sys.modules    # numba imports it to compile
if sys.argv[1] == 'second':
    out['M'] = crba(arm, q).tolist()
print(json.dumps(out))
'''


def run_script(script, cache, *args, **env):
    """
    Run ``script`` in a fresh process on the numba cache ``cache``; return its JSON line.

    In the directory holding ``cache``: ``python -c`` puts its working directory first on
    sys.path, and pytest run from robot_dynamics_ros/ (bench/flakiness.py) then imported the
    source tree's package instead of the one PYTHONPATH names.
    """
    proc = subprocess.run([sys.executable, '-c', script, *args], capture_output=True, text=True,
                          env=dict(os.environ, NUMBA_CACHE_DIR=str(cache), **env),
                          timeout=HANG_GUARD, cwd=os.path.dirname(os.fspath(cache)))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(cache, which):
    return run_script(SCRIPT, cache, which)


def test_a_cached_kernel_loads_without_compiling_and_computes_the_same(tmp_path):
    q = np.array([0.3, -0.4])
    _, M, _, g = closed_form(q, np.zeros(2), np.zeros(2))
    first = run(tmp_path, 'first')
    assert first['missing'] == ['gravity_one']          # an empty cache: compiled on first use
    assert first['registries']                          # compiled
    second = run(tmp_path, 'second')
    assert second['missing'] == []                      # loaded, without numba's compiler set-up
    assert not second['registries']
    assert second['g'] == first['g']                    # the same machine code: bit-identical
    np.testing.assert_allclose(second['g'], g, rtol=1e-12)
    # the signature still rejects other types (the public functions convert on TypeError)
    assert first['int_state'] == second['int_state'] == 'TypeError'
    # a kernel the cache lacks still compiles after a cached load
    np.testing.assert_allclose(second['M'], M, rtol=1e-12)


# A process on a copy of the package: load the observer's kernel (control/observer.py, which calls
# the core's momentum kernel) from the cache, compiling it when the cache lacks it or is stale.
CROSS_FILE = r'''
import json
from robot_dynamics_ros.dynamics import kernels
from robot_dynamics_ros.control import observer
missing = kernels.load_cached(['observer_step'])
kernels.compile_kernels(['observer_step'])
print(json.dumps({'missing': missing, 'file': observer.__file__}))
'''


def test_a_change_of_the_core_invalidates_the_cached_functions_of_other_files(tmp_path):
    """
    Numba keys a cached function by its own file; ours are keyed by the core's files too.

    Otherwise an update of kernels.py or spatial.py alone would leave the simulator and the
    observer running their old machine code, the old core compiled in (dynamics/cache.py).
    """
    import shutil
    import robot_dynamics_ros
    copy = tmp_path / 'pkg' / 'robot_dynamics_ros'
    shutil.copytree(os.path.dirname(robot_dynamics_ros.__file__), copy,
                    ignore=shutil.ignore_patterns('__pycache__'))
    path = os.pathsep.join([str(copy.parent), os.environ.get('PYTHONPATH', '')])

    def run():
        out = run_script(CROSS_FILE, tmp_path / 'cache', PYTHONPATH=path)
        assert out['file'].startswith(str(copy))
        return out['missing']
    assert run() == ['observer_step']                   # an empty cache: compiled
    assert run() == []                                  # cached
    with open(copy / 'dynamics' / 'spatial.py', 'a') as f:
        f.write('\n# a change of the core\n')
    assert run() == ['observer_step']                   # stale: compiled again
    assert run() == []


# A process that builds a simulator and steps it, and arms and disarms the teardown watchdog:
# both compiled functions of numba's own (not entry points), loaded from the cache without the
# refresh of numba's registries that cost each simulator_node 0.4 CPU-s at start and each
# feedforward_node as much at its stop (SciPy's linalg imported by it, too).
OTHERS = r'''
import json, sys
import numpy as np
from robot_dynamics_ros.dynamics import RobotModel, example_urdf
from robot_dynamics_ros.nodes.teardown import exit_watchdog
from robot_dynamics_ros.simulation import Simulator
sim = Simulator(RobotModel.from_urdf_file(example_urdf('planar_2r')), q0=[0.3, -0.4])
q = [sim.step([1.0, -0.5])[0].tolist() for _ in range(100)]
exit_watchdog(30.0, 'not reached').disarm()
print(json.dumps({'q': q, 'registries': 'numba.np.linalg' in sys.modules,
                  'scipy.linalg': 'scipy.linalg' in sys.modules}))
'''


def test_the_simulator_and_the_watchdog_load_from_the_cache_without_numbas_registries(tmp_path):
    first = run_script(OTHERS, tmp_path)
    assert first['registries']                          # an empty cache: compiled
    second = run_script(OTHERS, tmp_path)
    assert not second['registries'] and not second['scipy.linalg']
    assert second['q'] == first['q']                    # the same machine code: bit-identical
