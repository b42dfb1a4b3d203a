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
A stalled joint_states stream on gravity-loaded arms: the rule, in simulated time (issue 52).

feedforward_node's loop (``ControlLoop``, the node's defaults, in each joint and task mode; a
task mode's target the frame's pose at activation) closed over the simulator at 1 kHz (the
URDF's friction), each command applied from the next step (the driver's delay). The stream
stops for a gap while the plant runs on: the drive holds the last command (as ros2_control's
ForwardCommandController and simulator_node do), the node's watchdog runs every 50 ms (its timer
at state_timeout 0.1 s) and sends the on_timeout command once the state is stale. The arm may
move at most 0.05 rad and come back at most 0.5 rad/s. The same over DDS in real time, with the
nodes: ``bench/bench_stalls.py``.
"""
import numpy as np
import pytest

from robot_dynamics_ros.control import configuration
from robot_dynamics_ros.control import loop as loop_module
from robot_dynamics_ros.control.loop import ControlLoop
from robot_dynamics_ros.dynamics import RobotModel, gravity_torques
from robot_dynamics_ros.nodes.feedforward_declarations import PARAMETERS
from robot_dynamics_ros.simulation import Simulator

from conftest import robot_urdf
from test_control_loop import Log

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

# arm: a pose gravity loads (upper arm near level)
POSES = {
    'ur5': [0.0, -1.2, 1.5, -1.9, -1.57, 0.0],
    'ur10': [0.0, -1.2, 1.5, -1.9, -1.57, 0.0],
    'panda': [0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8, 0.02, 0.02],
    'xarm7': [0.0, -0.3, 0.0, 0.8, 0.0, 1.1, 0.0],
}
WATCHDOG = 0.05         # s: feedforward_node's timer period at state_timeout 0.1 s
MAX_DROP, MAX_BACK = 0.05, 0.5


def stall(arm, mode, gap, tool=0.0, settle=1.0, **values):
    """
    Hold still ``settle`` s, stop the stream for ``gap`` s; return (drop, back, the loop's log).

    ``tool``: kg on the last link that the plant has and the description lacks.
    """
    model = RobotModel.from_urdf(robot_urdf(arm))
    plant = model.with_payload(model.link_names[-1], tool, (0.0, 0.0, 0.05)) if tool else model
    v = {name: d[1] for name, d in PARAMETERS.items()}
    v.update(mode=mode, **values)
    loop = ControlLoop(Log())
    loop.set_observer_ready(True)
    ctrl = configuration.controller(model, v)
    obs, observing = configuration.observer(ctrl, v)
    loop.use_model(ctrl, obs, observing, v, 0.0)
    sim = Simulator(plant, q0=POSES[arm])
    drive = np.zeros(model.n)
    drive[ctrl.cmd] = gravity_torques(model, sim.q)[ctrl.cmd]     # a driver holding the pose
    t, next_watchdog, start = 0.0, WATCHDOG, None
    qs, qds = [], []
    for _ in range(int(round((settle + 1.0 + gap) / sim.dt))):
        q, qd = sim.step(drive)
        t += sim.dt
        reply = None
        if start is None and t >= settle:
            start, before = t, q.copy()
        if start is None or t > start + gap:
            reply = loop.joint_states(model.joint_names, q.tolist(), qd.tolist(), [], t, t,
                                      lambda: t)
        if t >= next_watchdog:
            next_watchdog += WATCHDOG
            reply = loop.watchdog(t) or reply
        if reply is not None and reply.command is not None:
            drive = np.zeros(model.n)
            drive[ctrl.cmd] = reply.command
        if start is not None:
            qs.append(q.copy())
            qds.append((t, qd.copy()))
    drop = max(np.abs(q - before).max() for q in qs)
    back = max(np.abs(qd).max() for s, qd in qds if s > start + gap)
    return drop, back, loop.log.lines


@pytest.mark.parametrize('mode', ['gravity', 'computed_torque', 'cartesian_impedance',
                                  'operational_space'])
@pytest.mark.parametrize('arm', sorted(POSES))
def test_a_gap_of_up_to_0_3_s_leaves_a_loaded_arm_where_it_was(arm, mode):
    for gap in (0.12, 0.3):
        drop, back, log = stall(arm, mode, gap)
        assert drop <= MAX_DROP and back <= MAX_BACK, (gap, drop, back, log)
        assert any('commanding gravity torque' in m for _, _, m in log), log


@pytest.mark.parametrize('arm', sorted(POSES))
def test_a_tool_the_description_lacks_stays_held_through_a_stall(arm):
    """computed_torque holding a 1.5 kg tool the model lacks: what held it goes on."""
    drop, back, log = stall(arm, 'computed_torque', 0.3, tool=1.5, settle=4.0)
    assert drop <= MAX_DROP and back <= MAX_BACK, (drop, back, log)


def test_on_g_of_q_alone_a_tool_the_description_lacks_sags(monkeypatch):
    """What on_timeout gravity was (never at rest: g(q) alone): the test above fails with it."""
    monkeypatch.setattr(loop_module, 'REST_TIME', float('inf'))
    drop, _, _ = stall('ur5', 'computed_torque', 0.3, tool=1.5, settle=4.0)
    assert drop > 2 * MAX_DROP, drop


def test_on_timeout_zero_drops_the_arm(arm='ur10'):
    """What the default was: the test above fails with it."""
    drop, _, log = stall(arm, 'gravity', 0.3, on_timeout='zero')
    assert drop > 10 * MAX_DROP, drop
    assert any('commanding zero torque' in m for _, _, m in log), log
