# Copyright 2026 tendon_robot_sim maintainers
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
Small rigid-body and arc geometry shared by the robot kinds (plain numpy, SI units).

* :func:`section_pose`: the end pose of a constant-curvature arc (the rod's CC
  kinematics and the trunk's sections); :func:`self_contact_bend` and :func:`self_contact`:
  the bend at which such an arc meets itself;
* :func:`rotation_to_quaternion`: rotation matrices to ROS quaternions (every model's
  poses on ``tip/pose``, ``/tf`` and the markers);
* :func:`hat`: the skew-symmetric matrix of a 3-vector (the numpy reference models).
"""

import math

import numpy as np


def section_pose(theta: float, phi: float, length: float) -> tuple[np.ndarray, np.ndarray]:
    """
    Pose (R, p) of the end of a CC arc of ``length`` in the frame of its base.

    The rotation is ^wH_h of Hadzic & Häseli's kinematic model (after Falkenhahn
    et al. 2015); the position
    ((1 - cos theta) cos phi, (1 - cos theta) sin phi, sin theta) * length / theta
    is evaluated as length * (theta/2 sinc^2(theta/2) (cos phi, sin phi), sinc(theta)),
    finite at theta = 0 (straight: (0, 0, length)).
    """
    c, s = math.cos(phi), math.sin(phi)
    ct, st = math.cos(theta), math.sin(theta)
    rotation = np.array([
        [c * c * (ct - 1.0) + 1.0, s * c * (ct - 1.0), c * st],
        [s * c * (ct - 1.0), c * c * (1.0 - ct) + ct, s * st],
        [-c * st, -s * st, ct]])
    # np.sinc(x) = sin(pi x) / (pi x)
    lateral = length * 0.5 * theta * np.sinc(theta / (2.0 * math.pi)) ** 2   # (1-cos)/kappa
    axial = length * np.sinc(theta / math.pi)                                # sin/kappa
    return rotation, np.array([lateral * c, lateral * s, axial])


def self_contact_bend(length, radius):
    """
    Return the bend [rad] from which an arc of ``length`` [m] meets itself (numpy arrays too).

    A planar arc of theta rad closes into a circle of radius length / theta; its end comes
    within a diameter (2 ``radius``, of the rod or section about its centre line) of its base
    along that circle once (2 pi - theta) length / theta < 2 radius, i.e. theta > 2 pi length
    / (length + 2 radius).
    """
    return 2.0 * math.pi * length / (length + 2.0 * radius)


def self_contact(theta: float, length: float, radius: float) -> str | None:
    """
    Say why a bend of ``theta`` [rad] of an arc of ``length`` [m] passes through itself, or None.

    At or past :func:`self_contact_bend`: the one check and words of every constant-curvature
    model (``cc``, ``cc-dynamics``).
    """
    limit = self_contact_bend(length, radius)
    if theta < limit:
        return None
    return (f'a bend of {theta:.4g} rad passes through itself: the arc of a full turn less '
            f"the section's diameter ({limit:.4g} rad) brings the section's end onto its base")


def rotation_to_quaternion(rotation: np.ndarray) -> np.ndarray:
    """
    Return unit quaternions [qx, qy, qz, qw] (qw >= 0) of rotation matrices (..., 3, 3).

    Shepperd's method: of the four ways to get the quaternion from the matrix,
    each matrix uses the one dividing by its largest component (well conditioned).
    Vectorised because scipy's Rotation costs most of a state() call.
    """
    m = np.asarray(rotation, dtype=float)
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    # 4 q_i^2 for i = x, y, z, w
    squares = np.stack((1.0 + m00 - m11 - m22, 1.0 - m00 + m11 - m22,
                        1.0 - m00 - m11 + m22, 1.0 + m00 + m11 + m22), axis=-1)
    s01, s02, s12 = m[..., 0, 1] + m[..., 1, 0], m[..., 0, 2] + m[..., 2, 0], \
        m[..., 1, 2] + m[..., 2, 1]
    d21, d02, d10 = m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], \
        m[..., 1, 0] - m[..., 0, 1]
    # row i: 4 q_i times (qx, qy, qz, qw)
    candidates = np.stack((
        np.stack((squares[..., 0], s01, s02, d21), axis=-1),
        np.stack((s01, squares[..., 1], s12, d02), axis=-1),
        np.stack((s02, s12, squares[..., 2], d10), axis=-1),
        np.stack((d21, d02, d10, squares[..., 3]), axis=-1),
    ), axis=-2)
    best = np.argmax(squares, axis=-1)[..., np.newaxis, np.newaxis]
    q = np.take_along_axis(candidates, best, axis=-2)[..., 0, :]
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., 3:] < 0.0, -q, q)


def hat(x: np.ndarray) -> np.ndarray:
    """Skew-symmetric matrix x^ with x^ y = x cross y."""
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])
