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
``closed-loop-demo``: simulator_node and feedforward_node in closed loop over DDS.

The run itself is ``nodes/closed_loop.py``; this module parses arguments, prints and plots.

    closed-loop-demo [--robot 2r | --urdf PATH] [--start Q..] [--goal Q..] [--duration T]
                     [--mode computed_torque] [--kp 400] [--kd 40] [--plot OUT.png]

Starts the ABA simulator and the controller as two processes (DDS on loopback, a private
ROS_DOMAIN_ID unless one is set), waits until the loop runs, sends the quintic rest-to-rest
trajectory from --start to --goal to the controller, records for the trajectory plus one second,
then prints the tracking error per joint (RMS and max) and the peak torques against the effort
limits, and writes a figure of desired vs actual positions and of the torque split. The default is
the lecture notes' 2R arm, q1 90 -> 0 deg and q2 -180 -> 90 deg in 2 s.
"""
import argparse
import sys

import numpy as np

from ..nodes.closed_loop import run

NOTES_2R = ([90.0, -180.0], [0.0, 90.0])


def summary(res):
    m = res['model']
    unit = ['deg' if jt == 0 else 'mm' for jt in m.jtype]
    scale = np.where(m.jtype == 0, 180 / np.pi, 1000.0)
    lines = [f'closed loop on "{m.name}": {len(res["t"])} commands over '
             f'{res["t"][-1]:.2f} s; tracking error = desired - actual',
             f'{"joint":<22} {"RMS err":>10} {"max err":>10} {"peak |tau|":>11} {"limit":>8} '
             f'{"use":>5}']
    for j, name in enumerate(m.joint_names):
        lim = m.effort_limits[j]
        use = f'{100 * res["peak"][j] / lim:4.0f}%' if np.isfinite(lim) else '  n/a'
        lines.append(f'{name:<22} {res["rms"][j] * scale[j]:7.3f} {unit[j]:<3}'
                     f'{res["max"][j] * scale[j]:7.3f} {unit[j]:<3}{res["peak"][j]:10.2f} '
                     f'{lim:8.1f} {use}')
    return '\n'.join(lines)


def plot(res, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from .cli import torque_split
    from ..control.trajectory import quintic
    m = res['model']
    t = res['t']
    tt = np.clip(t, 0, res['duration'])
    Q, QD, QDD = quintic(res['q_start'], res['q_goal'], res['duration'], tt)
    total, inertial, coriolis, gravity = torque_split(m, Q, QD, QDD)
    n = m.n
    fig, axes = plt.subplots(n, 2, figsize=(12, 2.4 * n + 1), sharex=True, squeeze=False)
    for j in range(n):
        a = axes[j, 0]
        a.plot(t, np.degrees(res['q_d'][:, j]), 'k--', label='desired')
        a.plot(t, np.degrees(res['q'][:, j]), label='actual (simulated)')
        a.set_ylabel(f'{m.joint_names[j]}\n[deg]')
        a.grid(alpha=0.3)
        b = axes[j, 1]
        b.plot(t, res['tau'][:, j], 'k', lw=2, label='commanded')
        b.plot(t, inertial[:, j], label='inertial M(q)q̈ (plan)')
        b.plot(t, coriolis[:, j], label='Coriolis/centrifugal (plan)')
        b.plot(t, gravity[:, j], label='gravity (plan)')
        b.set_ylabel('[N m]')
        b.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    axes[0, 1].legend(fontsize=8)
    axes[0, 0].set_title('positions')
    axes[0, 1].set_title('torque and its split along the plan')
    axes[-1, 0].set_xlabel('t [s] after the trajectory was sent')
    axes[-1, 1].set_xlabel('t [s] after the trajectory was sent')
    fig.suptitle(f'{m.name}: computed-torque control of the ABA simulation')
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(prog='closed-loop-demo',
                                 description=__doc__.strip().split('\n\n')[0])
    ap.add_argument('--urdf', help='URDF (default: the shipped 2R arm of the lecture notes)')
    ap.add_argument('--start', type=float, nargs='+', help='start, degrees/mm per joint')
    ap.add_argument('--goal', type=float, nargs='+', help='goal, degrees/mm per joint')
    ap.add_argument('--duration', type=float, default=2.0)
    ap.add_argument('--mode', default='computed_torque',
                    choices=['computed_torque', 'feedforward', 'gravity'])
    ap.add_argument('--kp', type=float, default=400.0)
    ap.add_argument('--kd', type=float, default=40.0)
    ap.add_argument('--integrator', default='semi_implicit_euler',
                    choices=['semi_implicit_euler', 'rk4'])
    ap.add_argument('--plot', default='closed_loop.png', help='figure path')
    args = ap.parse_args(argv)
    from ..dynamics import RobotModel, example_urdf
    urdf = args.urdf or example_urdf('planar_2r')
    try:
        model = RobotModel.from_urdf_file(urdf)
    except ValueError as e:
        print(f'closed-loop-demo: {e}', file=sys.stderr)
        return 1
    start, goal = args.start, args.goal
    if args.urdf is None and start is None and goal is None:
        start, goal = NOTES_2R
    start = [0.0] * model.n if start is None else start
    goal = [v + 30.0 for v in start] if goal is None else goal
    if len(start) != model.n or len(goal) != model.n:
        ap.error(f'--start and --goal need {model.n} values ({", ".join(model.joint_names)})')
    if not args.duration > 0:
        ap.error('--duration must be positive')
    scale = np.where(model.jtype == 0, np.pi / 180, 1e-3)
    res = run(urdf, np.array(start) * scale, np.array(goal) * scale, args.duration,
              mode=args.mode, kp=args.kp, kd=args.kd, integrator=args.integrator)
    print(summary(res))
    plot(res, args.plot)
    print(f'\nplot: {args.plot}   (node logs: {res["log_dir"]})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
