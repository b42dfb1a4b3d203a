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

"""Pinocchio (PyPI ``pin``) as the oracle: the same URDF, joints mapped by name."""
import numpy as np
import pinocchio as pin


class Oracle:
    """Pinocchio's model of a URDF string and maps between its vectors and ours."""

    def __init__(self, urdf_xml, model):
        self.pm = pin.buildModelFromXML(urdf_xml)
        self.pd = self.pm.createData()
        self.model = model
        self.pm.gravity.linear = np.asarray(model.gravity)
        names = list(self.pm.names)[1:]
        assert sorted(names) == sorted(model.joint_names), (names, model.joint_names)
        self.jid = [self.pm.getJointId(n) for n in model.joint_names]
        self.idx_q = [self.pm.joints[j].idx_q for j in self.jid]
        self.nq_j = [self.pm.joints[j].nq for j in self.jid]
        self.idx_v = [self.pm.joints[j].idx_v for j in self.jid]

    def q(self, q):
        """Our angle vector -> Pinocchio's configuration (cos/sin for continuous joints)."""
        out = np.zeros(self.pm.nq)
        for k, (iq, nq) in enumerate(zip(self.idx_q, self.nq_j)):
            if nq == 2:
                out[iq], out[iq + 1] = np.cos(q[k]), np.sin(q[k])
            else:
                out[iq] = q[k]
        return out

    def v(self, x):
        out = np.zeros(self.pm.nv)
        out[self.idx_v] = x
        return out

    def ours(self, x):
        """Pinocchio's tangent vector (or matrix rows and columns) in our joint order."""
        x = np.asarray(x)
        if x.ndim == 1:
            return x[self.idx_v]
        return x[np.ix_(self.idx_v, self.idx_v)]

    def fext(self, f_ext):
        """
        Convert our external wrenches to Pinocchio's.

        {link: [f; tau] in the link frame} -> Pinocchio's forces in the joint frames, through
        Pinocchio's own frame placements.
        """
        out = [pin.Force.Zero() for _ in range(self.pm.njoints)]
        for link, w in f_ext.items():
            frame = self.pm.frames[self.pm.getFrameId(link)]
            out[frame.parentJoint] += frame.placement.act(pin.Force(w[:3], w[3:]))
        return out

    def jacobian_local(self, q, link):
        """6 x n Jacobian [linear; angular] of a link frame, in that frame, our joint order."""
        fid = self.pm.getFrameId(link)
        J = pin.computeFrameJacobian(self.pm, self.pd, self.q(q), fid, pin.LOCAL)
        return J[:, self.idx_v]

    def rnea(self, q, qd, qdd, f_ext=None):
        args = (self.pm, self.pd, self.q(q), self.v(qd), self.v(qdd))
        if f_ext is not None:
            args = args + (self.fext(f_ext),)
        return self.ours(pin.rnea(*args))

    def gravity(self, q):
        return self.ours(pin.computeGeneralizedGravity(self.pm, self.pd, self.q(q)))

    def bias(self, q, qd):
        return self.ours(pin.nonLinearEffects(self.pm, self.pd, self.q(q), self.v(qd)))

    def crba(self, q):
        M = pin.crba(self.pm, self.pd, self.q(q)).copy()
        M = np.triu(M) + np.triu(M, 1).T
        return self.ours(M)

    def coriolis(self, q, qd):
        return self.ours(pin.computeCoriolisMatrix(self.pm, self.pd, self.q(q), self.v(qd)))

    def aba(self, q, qd, tau, f_ext=None):
        args = (self.pm, self.pd, self.q(q), self.v(qd), self.v(tau))
        if f_ext is not None:
            args = args + (self.fext(f_ext),)
        return self.ours(pin.aba(*args))

    def regressor(self, q, qd, qdd):
        """computeJointTorqueRegressor: rows and 10-column body blocks in our joint order."""
        Y = pin.computeJointTorqueRegressor(self.pm, self.pd, self.q(q), self.v(qd), self.v(qdd))
        cols = [10 * (j - 1) + c for j in self.jid for c in range(10)]
        return Y[np.ix_(self.idx_v, cols)]
