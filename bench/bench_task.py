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
Speed of one task-space command against the same law written with Pinocchio, in the same run.

    bash scripts/dev.sh run python bench/bench_task.py [--quick]

Per arm (ur5: 6 joints; panda: its 7 arm joints commanded of 9): the time of one
``Controller.command`` (state -> efforts clamped to the effort limits, observer off) in
cartesian_impedance and operational_space, next to computed_torque's, and of the law alone
(``TaskSpaceLaw.torques``, one compiled call). The reference is the same law with Pinocchio's
Python bindings and numpy: computeFrameJacobian, crba, nonLinearEffects, the classical
acceleration, Lambda by numpy's solve and inv, the rotation error by pin.log3, the dynamically
consistent projector (what a Python node built on Pinocchio would run). Checks first that both
give the same torques. Targets from the task-space issue: a cartesian_impedance command <= 10 us,
an operational_space one <= 15 us. Best of several repeats of many calls; exits 0 either way.
"""
import argparse
import timeit

import numpy as np
import pinocchio as pin

from robot_dynamics_ros.control import Controller
from robot_dynamics_ros.dynamics import RobotModel

from benchlib import read_urdf

ARMS = {
    'ur5': ('ur_description/urdf/ur5_robot.urdf', 'tool0', 6,
            [0.0, -1.2, 1.5, -1.9, -1.57, 0.0]),
    'panda': ('panda_description/urdf/panda.urdf', 'panda_hand', 7,
              [0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8, 0.02, 0.02]),
}
TARGETS = {'cartesian_impedance': 10.0, 'operational_space': 15.0}     # us per command
K = np.array([1000.0, 1000.0, 1000.0, 50.0, 50.0, 50.0])


def pinocchio_law(pm, pd, fid, cmd, K, zeta, Kn, zn, posture, mu, osc):
    """Return the law with Pinocchio and numpy: a function (q, qd, p_d, R_d) -> tau."""
    def law(q, qd, p_d, R_d):
        J = pin.computeFrameJacobian(pm, pd, q, fid, pin.LOCAL_WORLD_ALIGNED)
        M = pin.crba(pm, pd, q)
        M = np.triu(M) + np.triu(M, 1).T
        h = pin.nonLinearEffects(pm, pd, q, qd)
        T = pd.oMf[fid]
        Jc, Mc = J[:, cmd], M[np.ix_(cmd, cmd)]
        Y = np.linalg.solve(Mc, Jc.T)
        Lam = np.linalg.inv(Jc @ Y + mu * np.eye(6))
        e = np.concatenate([p_d - T.translation, pin.log3(R_d @ T.rotation.T)])
        v = J @ qd
        f = K * e - 2 * zeta * np.sqrt(K * np.diag(Lam)) * v
        if osc:
            pin.forwardKinematics(pm, pd, q, qd, np.zeros(pm.nv))
            a = pin.getFrameClassicalAcceleration(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED).vector
            f += Lam @ (-a)
        t0 = Kn * (posture - q[cmd]) - 2 * zn * np.sqrt(Kn * np.diag(Mc)) * qd[cmd]
        tau = h.copy()
        tau[cmd] += Jc.T @ f + t0 - Jc.T @ (Lam @ (Y.T @ t0))
        return tau
    return law


def per_call(fn, number, repeat):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument('--quick', action='store_true', help='fewer calls (a rough run)')
    args = ap.parse_args()
    number, repeat = (2000, 3) if args.quick else (20000, 7)
    print(f'pinocchio {pin.__version__}; best of {repeat} x {number} calls; us per call')
    print(f'{"arm":<7} {"mode":<20} {"command":>8} {"law":>7} {"pinocchio":>10} {"ratio":>6} '
          f'{"target":>7}')
    results = []
    for arm, (rel, frame, k, q0) in ARMS.items():
        xml = read_urdf(rel)
        model = RobotModel.from_urdf(xml)
        pm = pin.buildModelFromXML(xml)
        pd = pm.createData()
        assert list(pm.names)[1:] == list(model.joint_names)
        fid = pm.getFrameId(frame, pin.BODY)
        joints = model.joint_names[:k]
        cmd = np.arange(k)
        q = np.array(q0) + 0.01          # within max_error: the reference does not clip
        qd = np.random.default_rng(0).normal(size=model.n) * 0.3
        t_ct = None
        for mode in ('computed_torque', 'cartesian_impedance', 'operational_space'):
            c = Controller(model, joints=joints, mode=mode, task=dict(frame=frame, stiffness=K))
            c.q[:], c.received[:] = q0, True
            c.command(np.array(q0), np.zeros(model.n), 0.0, None, 0.0)     # activation at q0
            t_cmd = per_call(lambda: c.command(q, qd, 0.0, None, 1.0), number, repeat)
            if mode == 'computed_torque':
                t_ct = t_cmd
                print(f'{arm:<7} {mode:<20} {t_cmd:8.2f}')
                continue
            law = c.law
            law.torques(q, qd)                  # its singularity_damping at q (0 here)
            t_law = per_call(lambda: law.torques(q, qd), number, repeat)
            target = c.ref.task_target
            ref = pinocchio_law(pm, pd, fid, cmd, K, np.ones(6), np.full(k, 10.0),
                                np.ones(k), np.array(q0)[:k], c.law.singularity_damping,
                                mode == 'operational_space')
            tau_ref = ref(q, qd, target.position, target.rotation)
            tau = law.torques(q, qd)
            assert np.abs(tau - tau_ref).max() <= 1e-9 * np.abs(tau_ref).max(), \
                (arm, mode, tau, tau_ref)
            t_pin = per_call(lambda: ref(q, qd, target.position, target.rotation), number // 4,
                             repeat)
            met = 'met' if t_cmd <= TARGETS[mode] else 'MISSED'
            print(f'{arm:<7} {mode:<20} {t_cmd:8.2f} {t_law:7.2f} {t_pin:10.2f} '
                  f'{t_law / t_pin:6.2f} {"<=" + str(TARGETS[mode]):>7} {met}')
            results.append(f'[target] {arm} {mode}: a command {t_cmd:.2f} us (target <= '
                           f'{TARGETS[mode]} us; computed_torque {t_ct:.2f} us) {met}; the law '
                           f'{t_law:.2f} us = {t_law / t_pin:.2f} x Pinocchio + numpy')
    print('\n'.join(results))


if __name__ == '__main__':
    main()
