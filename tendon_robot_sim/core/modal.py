"""Small bending vibrations of the straight robot: an Euler-Bernoulli finite-element beam.

The rod is a clamped-free Euler-Bernoulli beam (bending stiffness E I, line density
rho A, rotary inertia rho I) carrying each vertebra as a lumped mass m at its arc
length and the rotary inertia of a thin disc about a diameter,
J = m (3 r^2 + t^2) / 12 (disc radius r, thickness t). Cubic Hermite elements with
consistent mass matrices; the generalized eigenproblem K phi = omega^2 M phi is
solved with ``scipy.linalg.eigh``. Gravity's prestress (the sag) and shear are
ignored: both change the first frequencies of the default robot by far less than 1 %.

It is independent of PyElastica: tests compare the simulator's free vibration with it,
and :func:`mass_proportional_damping` uses its first frequency to turn a damping ratio
into the rate of the simulator's mass-proportional damper.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh

from tendon_robot_sim.core.robot import POSITION_TOLERANCE, Robot

# Beam elements between vertebrae (at least): the first two frequencies converge to
# better than 1e-6 relative with this mesh.
FE_ELEMENTS = 200


def bending_frequencies(robot: Robot, count: int = 2) -> np.ndarray:
    """The ``count`` lowest bending natural frequencies omega [rad/s] of the straight robot.

    Bending in one plane (the rod is round, so both planes agree).
    """
    rod = robot.rod
    ei = rod.bending_stiffness
    rho_a = rod.linear_density
    rho_i = rod.density * rod.second_moment
    # mesh: a uniform grid with a node at every vertebra
    s = np.sort(np.concatenate((np.linspace(0.0, rod.length, FE_ELEMENTS + 1),
                                robot.vertebra_positions)))
    s = s[np.concatenate(([True], np.diff(s) > POSITION_TOLERANCE))]   # no zero-length elements
    n_dof = 2 * s.size                                  # (w, theta) per node
    stiffness = np.zeros((n_dof, n_dof))
    mass = np.zeros((n_dof, n_dof))
    for e, l in enumerate(np.diff(s)):
        k = ei / l ** 3 * np.array([[12, 6 * l, -12, 6 * l],
                                    [6 * l, 4 * l * l, -6 * l, 2 * l * l],
                                    [-12, -6 * l, 12, -6 * l],
                                    [6 * l, 2 * l * l, -6 * l, 4 * l * l]])
        m = rho_a * l / 420.0 * np.array([[156, 22 * l, 54, -13 * l],
                                          [22 * l, 4 * l * l, 13 * l, -3 * l * l],
                                          [54, 13 * l, 156, -22 * l],
                                          [-13 * l, -3 * l * l, -22 * l, 4 * l * l]])
        # rotary inertia of the rod's cross-sections (Rayleigh beam)
        m += rho_i / (30.0 * l) * np.array([[36, 3 * l, -36, 3 * l],
                                            [3 * l, 4 * l * l, -3 * l, -l * l],
                                            [-36, -3 * l, 36, -3 * l],
                                            [3 * l, -l * l, -3 * l, 4 * l * l]])
        dofs = slice(2 * e, 2 * e + 4)
        stiffness[dofs, dofs] += k
        mass[dofs, dofs] += m
    nodes = np.abs(s[:, np.newaxis] - robot.vertebra_positions).argmin(axis=0)
    mass[2 * nodes, 2 * nodes] += robot.vertebra_mass
    mass[2 * nodes + 1, 2 * nodes + 1] += robot.disc_inertia[0]
    free = slice(2, None)                               # node 0 clamped
    omega2 = eigh(stiffness[free, free], mass[free, free], eigvals_only=True,
                  subset_by_index=(0, count - 1))
    return np.sqrt(omega2)


def mass_proportional_damping(robot: Robot) -> float:
    """Rate c [1/s] of the damper that damps every velocity as dv/dt = -c v.

    Mass-proportional (Rayleigh) damping gives mode i the damping ratio
    zeta_i = c / (2 omega_i), so ``rod.damping: {ratio: zeta}`` is
    c = 2 zeta omega_1 with omega_1 from :func:`bending_frequencies`, and
    ``{rate: c}`` is c itself.
    """
    damping = robot.rod.damping
    if damping.rate is not None:
        return damping.rate
    return 2.0 * damping.ratio * float(bending_frequencies(robot, 1)[0])
