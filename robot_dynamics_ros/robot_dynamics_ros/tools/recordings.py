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
Read joint recordings for identification, without a ROS install.

**ROS 2 bags** (what ``ros2 bag record`` writes): a bag directory with its ``metadata.yaml``, or
a single ``.mcap`` or ``.db3`` file; MCAP and sqlite3 storage, read with the ``rosbags`` library.
``sensor_msgs/msg/JointState`` on one topic (default ``/joint_states``). Messages that name only
some joints (an arm and its gripper publishing separately) are merged per joint, as the
controller merges them: a sample is taken at each message of the stream that names the most
joints, the other joints at their latest values; samples before every joint has been seen are
dropped. Time is the header stamp (the bag's receive time when the stamp is zero). Efforts come
from the same messages, or, when the drivers report none, from ``effort_topic``: the controller's
``~/torques`` (JointState, the commanded efforts stamped with the joint state they answer),
matched by stamp; a command acts until the next state, so the effort at a state is taken as the
mean of the commands answering it and the state before.

**CSV** (``.csv``): a header row, then one row per sample: a column ``time`` (s), and per joint
``<joint>/position``, ``<joint>/effort`` and optionally ``<joint>/velocity`` (rad, N m, rad/s; m,
N, m/s for prismatic joints).
"""
import csv
import os

import numpy as np

from ..control.identification import IdentificationError, Recording

JOINT_STATE = 'sensor_msgs/msg/JointState'


def read(path, topic='/joint_states', effort_topic=None):
    """Read a bag (directory or file) or a CSV file into a Recording (IdentificationError)."""
    if not os.path.exists(path):
        raise IdentificationError(f'{path}: no such file or directory')
    if path.endswith('.csv'):
        return read_csv(path)
    return read_bag(path, topic, effort_topic)


def read_csv(path):
    """Read the CSV format of the module doc."""
    try:
        with open(path, newline='', encoding='utf-8') as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError) as e:
        raise IdentificationError(f'{path}: cannot read: {e}') from None
    if len(rows) < 2 or 'time' not in rows[0]:
        raise IdentificationError(f'{path}: needs a header row with a "time" column and data rows')
    header = [h.strip() for h in rows[0]]
    try:
        data = np.array([[float(x) for x in row] for row in rows[1:] if row], dtype=float)
    except ValueError as e:
        raise IdentificationError(f'{path}: a value is not a number ({e})') from None
    if data.ndim != 2 or data.shape[1] != len(header):
        raise IdentificationError(f'{path}: every row needs {len(header)} values')
    joints = [h[:-len('/position')] for h in header if h.endswith('/position')]
    if not joints:
        raise IdentificationError(f'{path}: no <joint>/position column')

    def column(joint, what, required=True):
        key = f'{joint}/{what}'
        if key not in header:
            if required:
                raise IdentificationError(f'{path}: no column {key}')
            return None
        return data[:, header.index(key)]

    velocity = [column(j, 'velocity', False) for j in joints]
    return Recording(joints, data[:, header.index('time')],
                     np.stack([column(j, 'position') for j in joints], axis=1),
                     None if any(v is None for v in velocity) else np.stack(velocity, axis=1),
                     np.stack([column(j, 'effort') for j in joints], axis=1), path)


def _open_bag(path):
    """Return an open rosbags Reader of a bag directory, or of a lone .mcap / .db3 file."""
    from rosbags.rosbag2 import Reader
    try:
        reader = Reader(path)
        reader.open()
        return reader
    except Exception as e:        # rosbags raises its own classes for each kind of damage
        raise IdentificationError(f'{path}: not a readable ROS 2 bag ({e})') from None


def _stamp(msg, received_ns):
    s = msg.header.stamp
    return s.sec + 1e-9 * s.nanosec if (s.sec or s.nanosec) else received_ns * 1e-9


def read_bag(path, topic='/joint_states', effort_topic=None):
    """Read JointState messages of a bag (see the module doc)."""
    from rosbags.typesys import Stores, get_typestore
    typestore = get_typestore(Stores.LATEST)
    reader = _open_bag(path)
    try:
        topics = {c.topic: c.msgtype for c in reader.connections}
        for t in [topic] + ([effort_topic] if effort_topic else []):
            if t not in topics:
                raise IdentificationError(
                    f'{path}: no topic {t} in the bag (it has {sorted(topics)})')
            if topics[t] != JOINT_STATE:
                raise IdentificationError(f'{path}: {t} carries {topics[t]}, not {JOINT_STATE}')
        wanted = [c for c in reader.connections if c.topic in (topic, effort_topic)]
        states, commands = [], {}
        for connection, received, raw in reader.messages(connections=wanted):
            msg = typestore.deserialize_cdr(raw, connection.msgtype)
            stamp = _stamp(msg, received)
            if connection.topic == topic:
                states.append((stamp, list(msg.name), np.array(msg.position, float),
                               np.array(msg.velocity, float), np.array(msg.effort, float)))
            if connection.topic == effort_topic:
                commands[round(stamp * 1e9)] = (list(msg.name), np.array(msg.effort, float))
    finally:
        reader.close()
    if not states:
        raise IdentificationError(f'{path}: no message on {topic}')
    return _merge(path, topic, states, effort_topic, commands)


def _merge(path, topic, states, effort_topic, commands):
    """Merge per joint; take efforts from the states or the commands (module doc)."""
    names = []
    for _, msg_names, *_ in states:
        names += [j for j in msg_names if j not in names]
    index = {j: k for k, j in enumerate(names)}
    n = len(names)
    widest = max(len(s[1]) for s in states)
    latest = np.full((4, n), np.nan)            # position, velocity, effort, seen
    rows, times = [], []
    notes = []
    dropped = {'before every joint was seen': 0, 'no commanded effort at that stamp': 0}
    has_velocity = True
    for stamp, msg_names, pos, vel, eff in states:
        idx = [index[j] for j in msg_names]
        if len(pos) != len(msg_names):
            raise IdentificationError(f'{path}: a {topic} message has {len(msg_names)} names and '
                                      f'{len(pos)} positions')
        latest[0, idx] = pos
        latest[3, idx] = 1.0
        if len(vel) == len(msg_names):
            latest[1, idx] = vel
        else:
            has_velocity = False
        if effort_topic is None:
            if len(eff) != len(msg_names):
                raise IdentificationError(
                    f'{path}: the {topic} messages carry no effort: give --effort-topic (the '
                    f'controller\'s ~/torques, the commanded effort)')
            latest[2, idx] = eff
        if len(msg_names) < widest:
            continue
        if np.isnan(latest[3]).any():
            dropped['before every joint was seen'] += 1
            continue
        row = latest[:3].copy()
        if effort_topic is not None:
            command = commands.get(round(stamp * 1e9))
            if command is None:
                dropped['no commanded effort at that stamp'] += 1
                continue
            cmd_names, cmd_eff = command
            row[2] = np.nan
            for j, e in zip(cmd_names, cmd_eff):
                if j in index:
                    row[2, index[j]] = e
            missing = [names[k] for k in np.flatnonzero(np.isnan(row[2]))]
            if missing:
                raise IdentificationError(f'{path}: {effort_topic} has no effort for joints '
                                          f'{missing}')
        rows.append(row)
        times.append(stamp)
    if not rows:
        reason = [k for k, v in dropped.items() if v]
        raise IdentificationError(f'{path}: no complete sample on {topic} ({", ".join(reason)})')
    data = np.array(rows)
    if effort_topic is not None and len(data) > 1:
        # the command answering state k acts until state k + 1: over [k - 1/2, k + 1/2], the span
        # a central difference of the velocities at k sees, the commands of k - 1 and k act half
        # each. (In process, with the simulator's integrator, a payload fit was within 0.6 mm
        # with or without this; commands that act later, as in a lockstep simulation with states
        # in flight, shift the fit whatever is done here: take the drives' efforts there.)
        data[1:, 2] = 0.5 * (data[:-1, 2] + data[1:, 2])
        notes.append('commanded efforts averaged over consecutive states (each acts until the '
                     'next state)')
    for reason, count in dropped.items():
        if count:
            notes.append(f'{count} samples dropped: {reason}')
    if not has_velocity:
        notes.append('velocities differentiated from positions (the messages carry none)')
    return Recording(names, np.array(times), data[:, 0], data[:, 1] if has_velocity else None,
                     data[:, 2], path, notes)
