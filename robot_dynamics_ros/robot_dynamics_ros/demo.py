"""``closed-loop-demo``: simulator_node and feedforward_node in closed loop over DDS.

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
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

NOTES_2R = ([90.0, -180.0], [0.0, 90.0])


def _env():
    env = dict(os.environ)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env.setdefault('ROS_DOMAIN_ID', str(random.randint(30, 99)))
    return env


def _exe(name):
    exe = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    if exe is None:
        raise SystemExit(f'closed-loop-demo: {name} is not installed')
    return exe


def _ros_list(values):
    return '[' + ', '.join(repr(float(v)) for v in values) + ']'


def run(urdf_path, q_start, q_goal, duration, *, mode='computed_torque', kp=400.0, kd=40.0,
        integrator='semi_implicit_euler', settle=1.0, log_dir=None, timeout=60.0):
    """Run the closed loop; returns a dict with the recorded arrays and the summary numbers."""
    os.environ.update(_env())
    import rclpy
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from .dynamics import RobotModel
    from .trajectory import quintic

    model = RobotModel.from_urdf_file(urdf_path)
    q_start, q_goal = np.asarray(q_start, float), np.asarray(q_goal, float)
    log_dir = log_dir or tempfile.mkdtemp(prefix='closed-loop-demo-')
    logs = [open(os.path.join(log_dir, f'{n}.log'), 'w') for n in ('simulator', 'controller')]
    procs = [
        subprocess.Popen([_exe('simulator_node'), '--ros-args', '-p', f'urdf_file:={urdf_path}',
                          '-p', f'initial_positions:={_ros_list(q_start)}',
                          '-p', 'publish_rate:=1000.0', '-p', f'integrator:={integrator}'],
                         stdout=logs[0], stderr=subprocess.STDOUT, env=os.environ.copy()),
        subprocess.Popen([_exe('feedforward_node'), '--ros-args', '-p', f'mode:={mode}',
                          '-p', f'kp:=[{float(kp)}]', '-p', f'kd:=[{float(kd)}]'],
                         stdout=logs[1], stderr=subprocess.STDOUT, env=os.environ.copy()),
    ]
    rclpy.init()
    node = rclpy.create_node('closed_loop_demo')
    states = {}            # stamp (ns) -> q
    answers = []           # (wall time, stamp, q_d, tau)
    node.create_subscription(
        JointState, 'joint_states',
        lambda m: states.__setitem__(m.header.stamp.sec * 10**9 + m.header.stamp.nanosec,
                                     np.array(m.position)), 100)
    node.create_subscription(
        JointState, '/inverse_dynamics_controller/torques',
        lambda m: answers.append((time.monotonic(), m.header.stamp.sec * 10**9
                                  + m.header.stamp.nanosec, np.array(m.position),
                                  np.array(m.effort))), 100)
    traj_pub = node.create_publisher(JointTrajectory, '/inverse_dynamics_controller/joint_trajectory',
                                     10)

    def spin_for(seconds, until=None):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.01)
            if until is not None and until():
                return True
        return until is None

    try:
        ok = spin_for(timeout, lambda: len(answers) > 200 and traj_pub.get_subscription_count())
        if not ok:
            raise RuntimeError('the loop did not start (no commands from the controller); logs in '
                               + log_dir)
        # The arm fell while the controller was still loading. Make the controller hold the start
        # (a one-point trajectory at time 0), then put the arm back there at rest: from then on
        # desired and actual agree, and the motion starts smoothly.
        hold = JointTrajectory(joint_names=list(model.joint_names),
                               points=[JointTrajectoryPoint(positions=q_start.tolist())])
        traj_pub.publish(hold)
        spin_for(0.3)
        reset = node.create_client(Trigger, '/dynamics_simulator/reset')
        if not reset.wait_for_service(timeout_sec=10.0):
            raise RuntimeError('simulator_node has no reset service; logs in ' + log_dir)
        future = reset.call_async(Trigger.Request())
        spin_for(10.0, future.done)
        spin_for(settle)
        # the trajectory: the quintic sampled every 50 ms with positions, velocities, accelerations
        t_pts = np.linspace(0.0, duration, int(round(duration / 0.05)) + 1)[1:]
        Q, QD, QDD = quintic(q_start, q_goal, duration, t_pts)
        msg = JointTrajectory(joint_names=list(model.joint_names))
        for t, q, qd, qdd in zip(t_pts, Q, QD, QDD):
            p = JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist(),
                                     accelerations=qdd.tolist())
            p.time_from_start.sec, p.time_from_start.nanosec = int(t), int(round(t % 1 * 1e9))
            msg.points.append(p)
        n0 = len(answers)
        t_sent = time.monotonic()
        traj_pub.publish(msg)
        spin_for(duration + 1.0)
    finally:
        node.destroy_node()
        rclpy.shutdown()
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        for f in logs:
            f.close()

    rec = [(w - t_sent, states[s], qd_, tau) for w, s, qd_, tau in answers[n0:]
           if s in states and len(qd_) == model.n]
    if len(rec) < 100:
        raise RuntimeError(f'too few answered states recorded ({len(rec)}); logs in {log_dir}')
    t = np.array([r[0] for r in rec])
    q = np.stack([r[1] for r in rec])
    q_d = np.stack([r[2] for r in rec])
    tau = np.stack([r[3] for r in rec])
    err = q_d - q
    return dict(model=model, t=t, q=q, q_d=q_d, tau=tau, err=err,
                rms=np.sqrt(np.mean(err**2, axis=0)), max=np.abs(err).max(axis=0),
                peak=np.abs(tau).max(axis=0), duration=duration, q_start=q_start, q_goal=q_goal,
                log_dir=log_dir)


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
    from .trajectory import quintic
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
    ap = argparse.ArgumentParser(prog='closed-loop-demo', description=__doc__.split('\n\n')[0])
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
    from .dynamics import RobotModel, example_urdf
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
