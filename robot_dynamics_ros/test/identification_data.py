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
Data for the identification tests.

A "true" arm that differs from its description, its torques along a trajectory (with noise if
asked), ROS 2 bags of them written with rosbags' writer, and optimised excitations computed
once per test run.
"""
import fcntl
import hashlib
import os
from pathlib import Path

import numpy as np

from robot_dynamics_ros.control import excitation as excitation_module
from robot_dynamics_ros.control import identification as identification_module
from robot_dynamics_ros.dynamics import regressor as regressor_module

from robot_dynamics_ros.control.identification import Recording
from robot_dynamics_ros.dynamics import mcI
from robot_dynamics_ros.dynamics.model import com_inertia
from robot_dynamics_ros.dynamics.regressor import parameters, regressor

EPSILON = 0.01
# a directory the test sessions of one run share (.ci/run gives the two distributions' one);
# unset: each session computes its own, once
CACHE = os.environ.get('RDR_TEST_CACHE')
_EXCITATIONS = {}
# what excitation.optimise computes with: its result changes when one of these does
OPTIMISER_SOURCES = (excitation_module, identification_module, regressor_module)


def excitation(model, base, **kwargs):
    """
    Return ``excitation.optimise(model, base, **kwargs)``'s trajectory, computed once per run.

    Optimising takes 14 CPU-s on ur5 and 39 on kinova; the end-to-end tests need the same ones
    (identical numerics on both distributions: the same seed, numpy, scipy and numba). Kept in
    this process and, with RDR_TEST_CACHE set, in that directory, keyed by the model, the
    arguments, the optimiser's sources and the numerics' versions; a session that finds another
    computing it waits for it (a lock per key) rather than computing it too.
    """
    import numba
    import scipy
    key = hashlib.sha256(repr((
        sorted(kwargs.items()), model.joint_names,
        *(a.tobytes() for a in (model.I, model.position_limits, model.velocity_limits,
                                model.effort_limits, model.friction, model.damping,
                                base.independent, base.K)),
        np.__version__, scipy.__version__, numba.__version__,
        *(Path(m.__file__).read_bytes() for m in OPTIMISER_SOURCES))).encode()).hexdigest()[:20]
    if key in _EXCITATIONS:
        return _EXCITATIONS[key]
    if CACHE is None:
        trajectory = excitation_module.optimise(model, base, **kwargs).trajectory
    else:
        path = Path(CACHE) / f'excitation-{key}.npz'
        with open(Path(CACHE) / f'excitation-{key}.lock', 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not path.exists():
                tr = excitation_module.optimise(model, base, **kwargs).trajectory
                partial = path.with_suffix('.partial.npz')
                np.savez(partial, a=tr.a, b=tr.b, start=tr.start,
                         base_frequency=tr.base_frequency)
                os.replace(partial, path)
            with np.load(path) as f:
                trajectory = excitation_module.FourierTrajectory(
                    list(model.joint_names), float(f['base_frequency']), f['a'], f['b'],
                    f['start'])
    _EXCITATIONS[key] = trajectory
    return trajectory


def true_arm(nominal, seed=0, payload_link=None):
    """
    Return the nominal model changed as a real arm differs from its URDF.

    Masses +-30 %, centres of mass moved by up to 3 cm, inertias about the CoM scaled by
    0.7..1.3, viscous and Coulomb friction, armature and a torque offset (+-0.8 N m: a torque
    sensor's bias, or friction that differs with the direction) on every joint, a 1.2 kg
    payload.
    """
    rng = np.random.default_rng(seed)
    I = nominal.I.copy()  # noqa: E741
    for j in range(nominal.n):
        m, c, Ic = com_inertia(I[j])
        if m <= 0:
            continue
        I[j] = mcI(m * rng.uniform(0.7, 1.3), c + rng.uniform(-0.03, 0.03, 3),
                   Ic * rng.uniform(0.7, 1.3))
    n = nominal.n
    true = nominal._replace(I=I, damping=rng.uniform(0.2, 1.0, n),
                            friction=rng.uniform(0.2, 1.5, n),
                            armature=rng.uniform(0.01, 0.2, n))
    true = true._replace(torque_offset=rng.uniform(-0.8, 0.8, n))
    link = payload_link or [k for k in nominal.link_names
                            if nominal.link_frame(k)[0] == n - 1][-1]
    return true.with_payload(link, 1.2, (0.01, -0.02, 0.06), (0.004, 0.0, 0.0, 0.005, 0.0, 0.003))


def recording(true, trajectory, duration, rate=1000.0, noise=None, seed=1, source='synthetic'):
    """
    Sample the true arm's inverse dynamics along ``trajectory`` (q, qd, tau at ``rate``).

    ``noise``: None, or (position rad, velocity rad/s, effort share of each joint's RMS)
    standard deviations of white noise added.
    """
    t = np.arange(int(round(duration * rate)) + 1) / rate
    q, qd, qdd = trajectory.sample(t)
    tau = regressor(true, q, qd, qdd, EPSILON) @ parameters(true)
    if noise is not None:
        rng = np.random.default_rng(seed)
        sq, sv, se = noise
        q = q + rng.normal(scale=sq, size=q.shape)
        qd = qd + rng.normal(scale=sv, size=qd.shape)
        tau = tau + rng.normal(size=tau.shape) * se * np.sqrt(np.mean(tau ** 2, axis=0))
    return Recording(list(true.joint_names), t + 100.0, q, qd, tau, source)


def write_bag(path, rec, storage='mcap', topic='/joint_states', with_effort=True,
              effort_topic=None):
    """Write a recording as sensor_msgs/JointState messages, as ros2 bag record would."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore
    ts = get_typestore(Stores.ROS2_JAZZY)
    JointState, Header, Time = (ts.types[k] for k in (
        'sensor_msgs/msg/JointState', 'std_msgs/msg/Header', 'builtin_interfaces/msg/Time'))
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        conn = writer.add_connection(topic, JointState.__msgtype__, typestore=ts)
        econn = (writer.add_connection(effort_topic, JointState.__msgtype__, typestore=ts)
                 if effort_topic else None)
        names = list(rec.names)
        for k, t in enumerate(rec.t):
            stamp = Time(sec=int(t), nanosec=int(round((t - int(t)) * 1e9)))
            msg = JointState(header=Header(stamp=stamp, frame_id=''), name=names,
                             position=np.asarray(rec.position[k], float),
                             velocity=(np.asarray(rec.velocity[k], float) if rec.velocity
                                       is not None else np.zeros(0)),
                             effort=(np.asarray(rec.effort[k], float) if with_effort
                                     else np.zeros(0)))
            ns = int(round(t * 1e9))
            writer.write(conn, ns, ts.serialize_cdr(msg, JointState.__msgtype__))
            if econn is not None:
                cmd = JointState(header=Header(stamp=stamp, frame_id=''), name=names,
                                 position=np.zeros(0), velocity=np.zeros(0),
                                 effort=np.asarray(rec.effort[k], float))
                writer.write(econn, ns + 1000, ts.serialize_cdr(cmd, JointState.__msgtype__))
