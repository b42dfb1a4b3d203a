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

    closed-loop-demo [--urdf PATH] [--start Q..] [--goal Q..] [--degrees] [--duration T]
                     [--mode computed_torque] [--kp 400] [--kd 40] [--friction-compensation 1]
                     [--max-rms 0.05] [--plot OUT.png]
    closed-loop-demo --task [--urdf PATH] [--start Q..] [--frame LINK] [--side 0.1]
                     [--period 8] [--mode cartesian_impedance] [--max-error 0.01] [--lockstep]
    closed-loop-demo --press --urdf PATH --frame FLANGE [--start Q..] [--probe-offset X Y Z]
                     [--force 10] [--source sensor] [--mesh-path DIR] [--plot OUT.png]

Starts the ABA simulator and the controller as two processes (DDS on loopback, a private
ROS_DOMAIN_ID unless one is set), waits until the loop runs, sends the quintic rest-to-rest
trajectory from --start to --goal to the controller, records for the trajectory plus one second,
then prints per joint the tracking error (RMS and max), the peak torque against the effort limit
and the share of samples at the limit, and writes a figure of desired vs actual positions and of
the commanded torque with its split along the plan. Positions are in rad (m for prismatic
joints), as everywhere in ROS; --degrees takes and prints revolute joints in degrees.

Without --urdf: the lecture notes' 2R arm, q1 90 -> 0 deg and q2 -180 -> 90 deg in 2 s. With one:
from 25 % to 75 % of each joint's range (+-0.5 rad around zero for a joint without limits or
with two turns or more), in a time that keeps every joint under 80 % of its velocity limit (at
least 2 s). The controller compensates the URDF's joint friction (--friction-compensation 1, the
share; the simulator applies that friction). Exit status 1 when the simulation halted or a
joint's tracking RMS exceeds --max-rms (rad; m / 10 for prismatic joints).

With --task the controller runs in a task mode (cartesian_impedance, or operational_space with
--mode) with armature 0.1 on both nodes, and the task frame (--frame; default the controller's)
goes round a square of --side m in the root's x-y plane, one corner at its start position, the
start orientation held, the nullspace holding the start posture on a redundant arm. The start
(--start; default: the best-conditioned of 400 seeded poses in the middle of the ranges from
which the square is reachable, see ``task_start``) should be away from singularities and from
where the square takes a joint to its limit. Prints the path error (RMS and max, m) and the
rotation error, plots the path, the error and ~/external_wrench over time; exit status 1 when the
path's largest error exceeds --max-error (m). The controller compensates the URDF's joint
friction (--friction-compensation, default 1), which the simulator applies. It runs in real time:
on a busy machine the loop's delay grows, and a stiff task loop can oscillate (operational_space
at 1000 N/m loses its phase margin at a sustained 20 ms). --lockstep runs it on simulated time,
one simulator step per answer of the controller, the simulator paused between two targets (100 Hz
of simulated time): the same result whatever the load, not in real time.

With --press (in lockstep) the arm gets a probe (a 0.2 kg link with a 2 cm sphere at
--probe-offset in --frame's frame, on a fixed joint where the simulated force/torque sensor
sits), the simulator a table 2 cm under it (the description's meshes found in --mesh-path
directories holding their packages); the controller presses --force N down with root z
force-controlled (--source sensor or observer), after 2 s slides 0.2 m along x at 5 cm/s, and
rests. Prints the steady force and the force while sliding, plots the table's force, the
sensor's reading and the probe's height against time; exit status 1 when the steady force is
off by more than 0.3 N (sensor) or 1 N (observer), or the slide leaves +-1.5 N.
"""
import argparse
import sys

import numpy as np

from ..nodes.closed_loop import run

NOTES_2R = (np.radians([90.0, -180.0]), np.radians([0.0, 90.0]))
MAX_RMS = 0.05          # rad; prismatic joints: a tenth of it, in m


def default_motion(model):
    """Return (start, goal, duration): 25 % -> 75 % of each range, under 80 % of vlim."""
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    finite = np.isfinite(lo) & np.isfinite(hi) & (hi - lo < 4 * np.pi)
    zero = np.clip(np.zeros(model.n), lo, hi)
    start = np.where(finite, lo + 0.25 * (hi - lo), zero - 0.5)
    goal = np.where(finite, lo + 0.75 * (hi - lo), zero + 0.5)
    return start, goal, motion_time(model, start, goal)


# The --task default start: a square whose path takes a joint within this of a hard limit is not
# reachable there (the limits layer's soft limits are 0.05 rad in: the arm stops on them, the
# rotation held no longer); the square is checked at this spacing (m), and so many of the
# best-conditioned poses are tried
REACH_MARGIN = 0.1
REACH_STEP = 0.01
REACH_CANDIDATES = 40


def square_reachable(model, frame, Q, side, margin=REACH_MARGIN):
    """
    Whether the frame can go round the demo's square from each pose of Q (K, n), its rotation held.

    Damped least-squares steps along the square (``nodes.closed_loop.square``, every REACH_STEP
    m, one corner at the frame's start); a pose fails where a joint comes within ``margin`` (a
    fifth of a shorter range) of a hard limit, or the frame cannot follow within 2 mm and 0.02
    rad (``control.task_space.rotation_error``, the task law's).
    """
    from ..control.task_space import rotation_error
    from ..dynamics import frame_jacobian, frame_placement
    from ..nodes.closed_loop import square
    lo, hi = model.position_limits.T
    margin = np.where(np.isfinite(hi - lo), np.minimum(margin, 0.2 * (hi - lo)), 0.0)
    lo, hi = lo + margin, hi - margin       # (a gripper's 4 cm: a fifth of its range)
    q = np.array(Q, dtype=float)
    T0 = frame_placement(model, q, frame)
    start, R0 = T0[:, :3, 3].copy(), T0[:, :3, :3].copy()
    steps = 4 * max(1, int(np.ceil(side / REACH_STEP)))     # one lap in 1 s, its points

    def error(target):
        """Return (K, 6): the position and rotation error of each pose of q to ``target``."""
        T = frame_placement(model, q, frame)
        e = np.empty((len(q), 6))
        e[:, :3] = target - T[:, :3, 3]
        for k in range(len(q)):
            rotation_error(R0[k], np.ascontiguousarray(T[k, :3, :3]), e[k, 3:])
        return e
    ok = np.ones(len(q), dtype=bool)
    for i in range(1, steps + 1):
        target = start + square(np.zeros(3), side, 1.0, i / steps)[0]
        for _ in range(5):
            J = frame_jacobian(model, q, frame)
            JJt = J @ np.swapaxes(J, 1, 2) + 1e-6 * np.eye(6)
            q += np.einsum('kji,kj->ki', J, np.linalg.solve(JJt, error(target)[..., None])[..., 0])
        e = error(target)
        ok &= (np.linalg.norm(e[:, :3], axis=1) < 2e-3) & \
            (np.linalg.norm(e[:, 3:], axis=1) < 0.02) & np.all((q >= lo) & (q <= hi), axis=1)
    return ok


def task_start(model, frame, samples=400, side=0.1, candidates=REACH_CANDIDATES):
    """
    Return the --task default start: a well-conditioned pose of ``frame`` the square fits at.

    Of ``samples`` poses drawn (seeded) in the middle 60 % of each joint's range (+-1.5 rad for
    joints of two turns or more), the one whose Jacobian's smallest singular value (rotation rows
    scaled by 0.2 m) is largest, among those whose gravity torques stay under half the effort
    limits and from which the frame can go round the square of ``side`` m with its rotation held
    and every joint REACH_MARGIN inside its limits (``square_reachable``; of the ``candidates``
    best, else the best). The middle of the ranges is no default: it put
    panda's joints 1 and 3 in line and ur5's wrist over its base, where the frame is soft along
    a lost direction. The best-conditioned pose of talos' arm took its arm_left_7_joint (+-0.70
    rad) onto its soft limit round the square: 17.6 mm off, the demo failed.
    """
    from ..dynamics import frame_jacobian, gravity_torques
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    finite = np.isfinite(lo) & np.isfinite(hi) & (hi - lo < 4 * np.pi)
    span = np.where(finite, hi - lo, 0.0)
    a = np.where(finite, np.where(finite, lo, 0.0) + 0.2 * span, -1.5)
    b = np.where(finite, np.where(finite, hi, 0.0) - 0.2 * span, 1.5)
    Q = np.random.default_rng(0).uniform(a, b, (samples, model.n))
    J = frame_jacobian(model, Q, frame)
    J[:, 3:] *= 0.2
    score = np.linalg.svd(J, compute_uv=False)[:, 5 if J.shape[2] >= 6 else J.shape[2] - 1]
    heavy = np.any(np.abs(gravity_torques(model, Q)) > 0.5 * model.effort_limits, axis=1)
    score[heavy] = -1.0
    best = np.argsort(-score)[:candidates]
    best = best[score[best] >= 0.0]
    if len(best):
        fits = square_reachable(model, frame, Q[best], side)
        if fits.any():
            return Q[best[int(np.argmax(fits))]]
    return Q[int(np.argmax(score))]


def task_summary(res):
    return (f'task-space closed loop on "{res["model"].name}" ({res["mode"]}): a square of '
            f'{res["side"]} m in {res["period"]} s, {len(res["t"])} poses; path error RMS '
            f'{res["rms"] * 1e3:.2f} mm, max {res["max"] * 1e3:.2f} mm; rotation error max '
            f'{res["rot_max"]:.4f} rad; external wrench max |f| '
            + (f'{np.abs(res["wrench"][:, :3]).max():.2f} N' if len(res['wrench']) else 'n/a'))


def plot_task(res, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.5))
    x, xd = res['x'], res['x_d']
    ax[0].plot(xd[:, 0], xd[:, 1], '--', label='target')
    ax[0].plot(x[:, 0], x[:, 1], label='task frame')
    ax[0].set(xlabel='x (m)', ylabel='y (m)', title='path (root x-y)', aspect='equal')
    ax[0].legend()
    ax[1].plot(res['t'], res['err'] * 1e3, label='|position error| (mm)')
    ax[1].plot(res['t'], res['rot'] * 1e3, label='rotation error (mrad)')
    ax[1].set(xlabel='t (s)', title='error to the target')
    ax[1].legend()
    if len(res['wrench']):
        for k, name in enumerate(('fx', 'fy', 'fz')):
            ax[2].plot(res['wrench_t'], res['wrench'][:, k], label=f'{name} (N)')
    ax[2].set(xlabel='t (s)', title='~/external_wrench')
    ax[2].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main_task(args, ap, urdf, model):
    from ..nodes.closed_loop import run_task
    to_si = np.where(model.jtype == 0, np.pi / 180 if args.degrees else 1.0, 1.0)
    from ..control import default_joints, default_task_frame
    frame = args.frame or default_task_frame(
        model, [model.index(j) for j in default_joints(model)[0]])
    if frame not in model.frames:
        ap.error(f'--frame {frame} is not a link of {model.name}')
    start = task_start(model, frame, side=args.side)
    if args.start is not None:
        if len(args.start) != model.n:
            ap.error(f'--start needs {model.n} values ({", ".join(model.joint_names)})')
        start = np.array(args.start) * to_si
    if not (args.side > 0 and args.period > 0):
        ap.error('--side and --period must be positive')
    mode = args.mode if args.mode in ('cartesian_impedance', 'operational_space') else \
        'cartesian_impedance'
    try:
        res = run_task(urdf, start, mode=mode, frame=frame, side=args.side, period=args.period,
                       friction_compensation=args.friction_compensation,
                       lockstep=args.lockstep)
    except RuntimeError as e:
        print(f'closed-loop-demo: {e}', file=sys.stderr)
        return 1
    print(task_summary(res))
    plot_task(res, args.plot)
    print(f'\nplot: {args.plot}   (node logs: {res["log_dir"]})')
    if res['max'] > args.max_error:
        print(f'closed-loop-demo: FAILED: the path error reached {res["max"] * 1e3:.2f} mm > '
              f'--max-error {args.max_error * 1e3:g} mm', file=sys.stderr)
        return 1
    return 0


def plot_press(res, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    f = res['force']
    ax[0].plot(res['t'], res['table'], label='the table\'s force on the probe (~/contacts)')
    ax[0].plot(res['estimate_t'], res['estimate'][:, 2], alpha=0.7,
               label='the observer\'s estimate, z (~/external_wrench)')
    ax[0].axhline(f, color='k', ls='--', lw=0.8, label=f'asked ({f:g} N)')
    ax[0].axvspan(2.0, 2.0 + res['distance'] / res['speed'] + 0.5, color='0.9',
                  label='sliding 0.2 m along x at 5 cm/s')
    ax[0].set(ylabel='N', title=f'pressing and sliding on "{res["model"].name}" '
                                f'(force.source {res["source"]})')
    ax[0].legend(loc='lower right', fontsize=8)
    ax[1].plot(res['pose_t'], res['pose'][:, 0], label='probe x (m)')
    ax[1].plot(res['pose_t'], res['pose'][:, 2], label='probe z (m)')
    ax[1].set(xlabel='simulated time since ~/target_wrench (s)', ylabel='m')
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main_press(args, ap, urdf, model):
    from ..nodes.closed_loop import run_press
    if args.urdf is None or not args.frame:
        ap.error('--press needs --urdf (an arm with <collision> geometry) and --frame (the '
                 'flange the probe goes on)')
    if args.frame not in model.frames:
        ap.error(f'--frame {args.frame} is not a link of {model.name}')
    start = task_start(model, args.frame)
    if args.start is not None:
        if len(args.start) != model.n:
            ap.error(f'--start needs {model.n} values ({", ".join(model.joint_names)})')
        start = np.array(args.start) * np.where(model.jtype == 0, np.pi / 180
                                                if args.degrees else 1.0, 1.0)
    if not args.force > 0:
        ap.error('--force must be > 0 (N, pressing down)')
    try:
        res = run_press(urdf, start, flange=args.frame, offset=args.probe_offset,
                        mesh_paths=args.mesh_path, force=args.force, source=args.source,
                        friction_compensation=args.friction_compensation)
    except RuntimeError as e:
        print(f'closed-loop-demo: {e}', file=sys.stderr)
        return 1
    band = 0.3 if args.source == 'sensor' else 1.0
    lo, hi = res['slide']
    print(f'pressing {args.force:g} N on a table with "{model.name}"\'s probe (force.source '
          f'{args.source}): steady {res["steady"]:.3f} N (1-2 s after asking); sliding 0.2 m at '
          f'5 cm/s: {lo:.2f} to {hi:.2f} N; sensor zeroed: {res["zeroed"]}')
    plot_press(res, args.plot)
    print(f'\nplot: {args.plot}   (node logs: {res["log_dir"]})')
    if not (abs(res['steady'] - args.force) <= band and args.force - 1.5 <= lo
            and hi <= args.force + 1.5):
        print(f'closed-loop-demo: FAILED: the steady force is off by more than {band} N or the '
              f'slide left +-1.5 N', file=sys.stderr)
        return 1
    return 0


def motion_time(model, start, goal, at_least=2.0):
    """Return the quintic's duration keeping every joint under 80 % of its velocity limit."""
    vmax = np.where(np.isfinite(model.velocity_limits) & (model.velocity_limits > 0),
                    0.8 * model.velocity_limits, np.inf)
    return float(max(at_least, np.max(1.875 * np.abs(np.asarray(goal) - start) / vmax)))


def _units(model, degrees):
    """Per joint: (position unit, scale from SI, effort unit)."""
    out = []
    for jt in model.jtype:
        if jt == 0:
            out.append(('deg', 180 / np.pi, 'N m') if degrees else ('rad', 1.0, 'N m'))
        else:
            out.append(('m', 1.0, 'N'))
    return out


def failures(res, max_rms):
    """Return what makes the run fail: a halt, or joints tracking worse than max_rms."""
    out = [f'the simulation halted: {res["halted"]}'] if res['halted'] else []
    m = res['model']
    bound = np.where(m.jtype == 0, max_rms, max_rms / 10)
    for j in np.flatnonzero(res['rms'] > bound):
        unit = 'rad' if m.jtype[j] == 0 else 'm'
        out.append(f'{m.joint_names[j]} tracked with RMS {res["rms"][j]:.4g} {unit} > '
                   f'{bound[j]:.4g} {unit} (--max-rms)')
    return out


def summary(res, degrees=False):
    m = res['model']
    units = _units(m, degrees)
    lim = m.effort_limits
    saturated = np.mean(np.abs(res['tau']) >= lim * (1 - 1e-9), axis=0)
    lines = [f'closed loop on "{m.name}" ({res["mode"]}, friction compensation '
             f'{res["friction_compensation"]:g}): {len(res["t"])} commands over '
             f'{res["t"][-1]:.2f} s; tracking error = desired - actual',
             f'{"joint":<24} {"RMS err":>12} {"max err":>12} {"peak |effort|":>16} '
             f'{"limit":>8} {"use":>5} {"at limit":>8}']
    for j, name in enumerate(m.joint_names):
        unit, scale, eff = units[j]
        use = f'{100 * res["peak"][j] / lim[j]:4.0f}%' if np.isfinite(lim[j]) else '  n/a'
        lines.append(f'{name:<24} {res["rms"][j] * scale:8.4f} {unit:<3} '
                     f'{res["max"][j] * scale:8.4f} {unit:<3} {res["peak"][j]:10.2f} {eff:<5} '
                     f'{lim[j]:8.1f} {use} {100 * saturated[j]:7.1f}%')
    if res['halted']:
        lines.append(f'HALTED: {res["halted"]}')
    return '\n'.join(lines)


def plot(res, path, degrees=False):
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
    friction = res['friction_compensation'] * (m.damping * QD + m.friction * np.tanh(QD / 0.01))
    n = m.n
    units = _units(m, degrees)
    fig, axes = plt.subplots(n, 2, figsize=(12, 2.4 * n + 1), sharex=True, squeeze=False)
    for j in range(n):
        unit, scale, eff = units[j]
        a = axes[j, 0]
        a.plot(t, res['q_d'][:, j] * scale, 'k--', label='desired')
        a.plot(t, res['q'][:, j] * scale, label='actual (simulated)')
        a.set_ylabel(f'{m.joint_names[j]}\n[{unit}]')
        a.grid(alpha=0.3)
        b = axes[j, 1]
        b.plot(t, res['tau'][:, j], 'k', lw=2, label='commanded')
        b.plot(t, total[:, j] + friction[:, j], 'k:', lw=1, label='plan total')
        b.plot(t, inertial[:, j], label='inertial M(q)q̈')
        b.plot(t, coriolis[:, j], label='Coriolis/centrifugal')
        b.plot(t, gravity[:, j], label='gravity')
        if np.any(friction[:, j]):
            b.plot(t, friction[:, j], label='friction compensation')
        b.set_ylabel(f'[{eff}]')
        b.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    axes[0, 1].legend(fontsize=8)
    axes[0, 0].set_title('positions')
    axes[0, 1].set_title('commanded effort and the split of the plan\'s')
    axes[-1, 0].set_xlabel('t [s] after the trajectory was sent')
    axes[-1, 1].set_xlabel('t [s] after the trajectory was sent')
    title = {'computed_torque': 'computed-torque control', 'feedforward': 'feedforward control',
             'gravity': 'gravity compensation'}[res['mode']]
    fig.suptitle(f'{m.name}: {title} of the ABA simulation'
                 + (f' (HALTED: {res["halted"]})' if res['halted'] else ''))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def parser():
    """Return the argument parser of ``closed-loop-demo`` (its --help and the CLI reference)."""
    ap = argparse.ArgumentParser(prog='closed-loop-demo',
                                 description=__doc__.strip().split('\n\n')[0])
    ap.add_argument('--urdf', help='URDF (default: the shipped 2R arm of the lecture notes)')
    ap.add_argument('--start', type=float, nargs='+', metavar='Q',
                    help='start, one value per joint in model order (rad or m; default: 25 %% of '
                         'each range)')
    ap.add_argument('--goal', type=float, nargs='+', metavar='Q',
                    help='goal (rad or m; default: 75 %% of each range)')
    ap.add_argument('--degrees', action='store_true',
                    help='--start/--goal and the output in degrees for revolute joints')
    ap.add_argument('--duration', type=float,
                    help='s (default: 2 s, longer when a joint would pass 80 %% of its velocity '
                         'limit)')
    ap.add_argument('--mode', default='computed_torque',
                    choices=['computed_torque', 'feedforward', 'gravity', 'cartesian_impedance',
                             'operational_space'])
    ap.add_argument('--task', action='store_true',
                    help='task-space: the task frame round a square (see above)')
    ap.add_argument('--frame', help='--task: the task frame (default: the controller\'s); '
                                    '--press: the flange the probe goes on')
    ap.add_argument('--press', action='store_true',
                    help='press a probe on a simulated table with force control and slide it')
    ap.add_argument('--probe-offset', type=float, nargs=3, default=[0.0, 0.0, 0.06],
                    metavar=('X', 'Y', 'Z'), help='--press: the probe in --frame\'s frame (m)')
    ap.add_argument('--force', type=float, default=10.0, help='--press: N, pressing down')
    ap.add_argument('--source', default='sensor', choices=['sensor', 'observer'],
                    help='--press: force.source')
    ap.add_argument('--mesh-path', action='append', default=[], metavar='DIR',
                    help='--press: a directory holding the packages the meshes name')
    ap.add_argument('--side', type=float, default=0.1, help='--task: the square\'s side (m)')
    ap.add_argument('--period', type=float, default=8.0, help='--task: seconds per lap')
    ap.add_argument('--max-error', type=float, default=0.01, metavar='M',
                    help='--task: exit status 1 when the path error exceeds this (m)')
    ap.add_argument('--lockstep', action='store_true',
                    help='--task: on simulated time, one simulator step per controller answer '
                         '(load does not change the result; not real time)')
    ap.add_argument('--kp', type=float, default=400.0)
    ap.add_argument('--kd', type=float, default=40.0)
    ap.add_argument('--friction-compensation', type=float, default=1.0, metavar='SHARE',
                    help='share of the URDF friction the controller compensates (default 1)')
    ap.add_argument('--max-rms', type=float, default=MAX_RMS, metavar='RAD',
                    help=f'exit status 1 when a joint tracks with a larger RMS error (rad; a '
                         f'tenth of it in m for prismatic joints; default {MAX_RMS})')
    ap.add_argument('--integrator', default='semi_implicit_euler',
                    choices=['semi_implicit_euler', 'rk4'])
    ap.add_argument('--plot', default='closed_loop.png', help='figure path')
    return ap


def main(argv=None):
    ap = parser()
    args = ap.parse_args(argv)
    from ..dynamics import RobotModel, example_urdf
    urdf = args.urdf or example_urdf('planar_2r')
    try:
        model = RobotModel.from_urdf_file(urdf)
    except ValueError as e:
        print(f'closed-loop-demo: {e}', file=sys.stderr)
        return 1
    if args.press:
        return main_press(args, ap, urdf, model)
    if args.task or args.mode in ('cartesian_impedance', 'operational_space'):
        return main_task(args, ap, urdf, model)
    to_si = np.where(model.jtype == 0, np.pi / 180 if args.degrees else 1.0, 1.0)
    start, goal, duration = default_motion(model)
    if args.urdf is None:
        start, goal, duration = NOTES_2R[0], NOTES_2R[1], 2.0
    for name, given in (('start', args.start), ('goal', args.goal)):
        if given is not None and len(given) != model.n:
            ap.error(f'--{name} needs {model.n} values ({", ".join(model.joint_names)})')
    if args.start is not None:
        start = np.array(args.start) * to_si
    if args.goal is not None:
        goal = np.array(args.goal) * to_si
    if args.duration is not None:
        if not args.duration > 0:
            ap.error('--duration must be positive')
        duration = args.duration
    elif args.start is not None or args.goal is not None:
        duration = motion_time(model, start, goal)
    if not 0 <= args.friction_compensation <= 1:
        ap.error('--friction-compensation is a share in [0, 1]')
    try:
        res = run(urdf, start, goal, duration, mode=args.mode, kp=args.kp, kd=args.kd,
                  integrator=args.integrator, friction_compensation=args.friction_compensation)
    except RuntimeError as e:
        print(f'closed-loop-demo: {e}', file=sys.stderr)
        return 1
    print(summary(res, args.degrees))
    plot(res, args.plot, args.degrees)
    print(f'\nplot: {args.plot}   (node logs: {res["log_dir"]})')
    problems = failures(res, args.max_rms)
    for p in problems:
        print(f'closed-loop-demo: FAILED: {p}', file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
