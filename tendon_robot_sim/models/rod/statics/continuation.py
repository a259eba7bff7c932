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
The cold starts of a statics solve: equal load steps, and continuation in load.

Without obstacles :meth:`StaticsSolver._solve` starts cold from the straight guess, then in
:data:`CONTINUATION_STEPS` equal steps of the inputs and the tip load
(:func:`continue_in_equal_steps`). With obstacles, without them when those fail, and first
for a robot whose :func:`gravity_load` is above :data:`HEAVY`, :func:`continue_in_load`
continues from the unloaded rod, as follows.

A shooting solve guesses the base wrench; the straight robot's guess (the clamp carrying every
load, :meth:`StaticsSolver._cold_guess`) bends the rod as if nothing held it, deep into any
obstacle it rests on, where the penalty's Newton iteration finds roots with the rod through
the obstacle (a propped steel cantilever converged with its tip at the prop's axis). So with a
world the cold start begins from the unloaded straight rod (base wrench 0, touching at most)
and scales the loads (gravity, tip wrench) by lambda from 0 to 1 with the inputs at zero, then
the inputs (tensions or displacements) likewise, each step warm-started from the last with a
secant predictor. A step is refused and
halved when Newton fails, when the tip jumps (more than :data:`JUMP` times the last step's
motion, scaled to the step, plus :data:`JUMP_FLOOR` of the length: the signature of the rod
tunnelling through an obstacle) or when the envelope sinks deeper than its radius into an
obstacle, or when Newton needs more than :data:`STEP_ITERATIONS` (a smaller step costs less than
a struggling iteration); it grows after easy steps. A step whose first Newton iteration leaves
the scaled residual above :data:`REACH` is refused at once: such steps (a warm 0.25 N step onto
config/world_post.yaml starts at 1e2 to 3e3 and is at 1e1 or more after one iteration) almost
never converged in their iterations, and each failure cost some 200 to 350 residual
evaluations where the halved steps, once within reach, converge in four to six
(docs/performance.md, "Contact statics: steps out of reach").

Without obstacles :meth:`StaticsSolver._solve` needs it for a heavy, soft rod: the cold start
and its equal load steps scale the inputs and the tip load but keep the full weight, and from
the straight guess such a rod's rest shape (w L^3 / E I from about 17, w = rho A g) is out of
Newton's reach. Worse, Newton can converge from there on an unstable equilibrium, the rod
curled up over its base (the discrete model at w L^3 / E I from 45 to 140,
test_heavy_rod.py), a root like any other. So a cold solve of a robot whose
:func:`gravity_load` is above :data:`HEAVY` starts here, then tries the equal load steps; a
lighter robot's tries this last. Scaled from zero, gravity lets every model find the rest
shape up to
w L^3 / E I of about 320: the first step from the unloaded rod could move the tip only
:data:`JUMP_FLOOR` of the length (no earlier step to scale from), and the tip of a softer
rod sags more than that (linearly, w L^4 / (8 E I) per unit of lambda) at lambda =
:data:`MIN_STEP`. Without obstacles a first step past that floor now stands when the step
twice as long moved the tip at most :data:`JUMP` times as far: the upright FTDCR v4, near
buckling under its own weight, moved its tip more than the floor at 1/4096 of a dataset's
tensions, and its solves failed (test_near_buckling.py).

With obstacles every solve of the discrete model (each step here, :meth:`StaticsSolver._run`)
starts its bays (the pose of each vertebra relative to the last, found by an inner fixed-point
iteration) straight, not from the poses its last residual evaluation left: a bay's fixed point
is not unique under tendon loads, and a pose left by a refused trial (the rod swung far into
or past an obstacle) let the inner iteration settle on bays bent away from the tendon. The
outer residual then depended on that memory, and the continuation followed a branch of such
roots to a shape curled away from the tendon with no contact left (the silicone robot with
2 N on t3 in config/world_post.yaml: tip at y = -176 mm where the explicit dynamics rests at
+23 mm against the post).
"""

from __future__ import annotations

import numpy as np

from tendon_robot_sim.models._cosserat_kernels import MAT_GRAVITY, MAT_RHOAG
from tendon_robot_sim.models.rod.statics._kernels import TENSION

FIRST_STEP = 1.0 / 8.0
MIN_STEP = 1.0 / 4096.0
MAX_STEP = 0.25
JUMP = 4.0
JUMP_FLOOR = 0.01      # of the rod length
EASY_ITERATIONS = 6    # Newton iterations of a step after which the next one grows
STEP_ITERATIONS = 20   # Newton iterations of a step before it is halved instead
REACH = 1.0            # scaled residual after a step's first Newton iteration, else halved
# The cold start's equal load steps after a failed cold start: numbers of steps tried.
CONTINUATION_STEPS = (4, 16)
# The gravity load (:func:`gravity_load`) above which a cold solve without obstacles starts
# from the unloaded rod: from the straight guess test_heavy_rod.py's discrete rod found its
# rest shape up to 16.5, failed from 17 (a later attempt found it up to 40) and converged
# curled over its base at 45 to 140; the default robot (its discs as heavy as its rod),
# softened, alike from 45. Every shipped robot is below 7.5 (opencr_ftdcr_v4.yaml: 7.2).
HEAVY = 15.0


def gravity_load(robot) -> float:
    """
    Return the robot's dimensionless gravity load, 2 L M / E I.

    M is the moment of its weight (rod and vertebra discs) about the clamp of the straight
    robot held across gravity, so a bare rod's is w L^3 / E I (w = rho A g); E I of the
    uniform circular rod, the same in every bending direction.
    """
    rod = robot.rod
    g = float(np.linalg.norm(robot.gravity))
    moment = g * (rod.linear_density * rod.length ** 2 / 2.0
                  + robot.vertebra_mass * float(np.sum(robot.vertebra_positions)))
    return 2.0 * rod.length * moment / rod.bending_stiffness


def continue_in_equal_steps(solver, mode: int, state, tau_in: np.ndarray, q: np.ndarray,
                            tip: np.ndarray) -> tuple[bool, tuple | None]:
    """
    Solve cold from the straight guess, then in CONTINUATION_STEPS equal load steps.

    Returns (converged, progress): ``progress`` is (steps solved, steps) of the last attempt,
    None when none could start. Tension mode starts from the straight robot and scales
    tensions and tip load from 0. Displacement mode starts from the robot with slack tendons
    under the same tip load, whose displacements q0 make each tendon just taut, guesses
    tensions (q - q0) / (tendon compliance at zero load) and moves the displacements from q0.
    Neither scales gravity (:func:`continue_in_load` does). Each step is warm-started from the
    last: a strongly curled robot is out of reach of Newton's method from the straight guess.
    """
    natural = solver._natural_state(tip) if mode != TENSION else None
    progress = None
    for steps in (1,) + CONTINUATION_STEPS:
        solver._forget(state)
        if mode == TENSION:
            solver._cold_guess(tau_in / steps, tip / steps, state.x)
            path = [(tau_in * k / steps, q, tip * k / steps) for k in range(1, steps + 1)]
        elif natural is not None:
            q0, wrench = natural
            z = (q0 + (q - q0) / steps - q0) / solver._slack_scale
            state.x[0:6] = wrench
            solver._add_tendon_guess(np.maximum(z, 0.0), state.x)
            state.x[6:] = z / solver._plan.scale[0, 6:]
            path = [(tau_in, q0 + (q - q0) * k / steps, tip) for k in range(1, steps + 1)]
        else:
            break
        progress = (next((k for k, inputs in enumerate(path)     # steps before a failure
                          if not solver._run(mode, state, *inputs)), steps), steps)
        if progress[0] == steps:
            return True, progress
    return False, progress


def continue_in_load(solver, mode: int, state, tau_in: np.ndarray, q: np.ndarray,
                     tip: np.ndarray) -> bool:
    """
    Solve ``solver``'s problem by continuation from the unloaded rod; True when converged.

    First the loads (gravity and the tip wrench) with the inputs at zero, then the inputs
    (tensions or displacements) under the full loads: scaled together, the discrete model's
    tendon chords, still nearly slack while the weight barely presses the rod onto an
    obstacle, let Newton's method find roots with the rod curled over it. On success
    state.x, state.J and the solver's trajectory hold the solution at full load.
    """
    pl = solver._plan
    loads = slice(MAT_RHOAG, MAT_GRAVITY + 3)
    full = pl.mat[loads].copy()
    iterations = solver.max_iterations
    solver.max_iterations = min(iterations, STEP_ITERATIONS)

    def weighed(lam: float):
        pl.mat[loads] = full * lam
        return tau_in * 0.0, q * 0.0, tip * lam

    def pulled(lam: float):
        return tau_in * lam, q * lam, tip

    try:
        state.x[:] = 0.0
        state.jac_ok[0] = False
        if not solver._run(mode, state, *weighed(0.0)):
            return False
        return _follow(solver, mode, state, weighed) and (
            not (np.any(tau_in) or np.any(q)) or _follow(solver, mode, state, pulled))
    finally:
        pl.mat[loads] = full
        solver.max_iterations = iterations


def continue_from_last(solver, mode: int, state, tau_in: np.ndarray, q: np.ndarray,
                       tip: np.ndarray) -> bool:
    """
    Solve warm from the last solution of ``state`` to these inputs; True when converged.

    The inputs move along the line from the last solve's (``state.u``) to these, in one step
    when it passes the checks of the module docstring, else in halves: a warm Newton solve
    alone could land with the rod through a thin obstacle (the default robot on
    config/world_post.yaml stepped by 0.25 N on t3 ended under its 4 mm plate, where no
    penalty acts).
    """
    nt = solver.n_tendons
    last, tip_last = state.u[:nt].copy(), state.u[nt:].copy()
    tension = mode == TENSION

    def along(lam: float):
        inputs = last + ((tau_in if tension else q) - last) * lam
        return ((inputs, q, tip_last + (tip - tip_last) * lam) if tension
                else (tau_in, inputs, tip_last + (tip - tip_last) * lam))

    iterations = solver.max_iterations
    solver.max_iterations = min(iterations, STEP_ITERATIONS)
    try:
        state.x[:] = state.x_last
        state.J[:] = state.J_last
        state.jac_ok[0] = True
        # the last solution again: its trajectory is where the jumps are measured from
        return solver._run(mode, state, *along(0.0)) and _follow(
            solver, mode, state, along, first_step=1.0)
    finally:
        solver.max_iterations = iterations


def _follow(solver, mode: int, state, inputs, first_step: float = FIRST_STEP) -> bool:
    """
    Continue from the solution in ``state`` along ``inputs(lam)`` from lam = 0 to 1.

    ``inputs(lam)`` sets what it scales in the plan and returns (tensions, displacements, tip
    wrench) at lam. Adaptive steps from ``first_step``, refused and halved as the module
    docstring says.
    """
    length = solver.robot.rod.length
    radius = solver._contact.radius[0]
    lam, step = 0.0, first_step
    x_prev, tip_prev = state.x.copy(), solver._traj[-1, 0:3].copy()
    dx, motion, last_step = np.zeros_like(state.x), 0.0, 1.0
    J = state.J.copy()
    refused = np.inf    # without obstacles: the tip motion of the first step refused as a jump
    while lam < 1.0:
        step = min(step, 1.0 - lam)
        target = lam + step
        arguments = inputs(target)
        state.x[:] = x_prev + dx * (step / last_step)
        state.J[:] = J
        state.jac_ok[0] = True
        ok = solver._run(mode, state, *arguments, reach=REACH)
        moved = float(np.linalg.norm(solver._traj[-1, 0:3] - tip_prev))
        if ok and moved > JUMP * motion * step / last_step + JUMP_FLOOR * length:
            # a first step has no earlier one to scale from: past the floor, it stands if
            # the step twice as long moved the tip at most JUMP times as far (a smooth
            # response, as a robot near buckling under its own weight has, not a jump)
            ok = lam == 0.0 and solver.world is None and refused <= JUMP * moved
            refused = moved if lam == 0.0 else refused
        if ok and solver.world is not None:
            deepest = max((c.penetration for c in solver.contacts(solver._traj)), default=0.0)
            ok = deepest <= radius
        if not ok:
            if step <= MIN_STEP:
                return False
            step *= 0.5
            continue
        dx = state.x - x_prev
        x_prev, tip_prev, motion, last_step = state.x.copy(), solver._traj[-1, 0:3].copy(), \
            moved, step
        J = state.J.copy()
        lam = target
        if solver._info[1] <= EASY_ITERATIONS:
            step = min(MAX_STEP, step * 1.5)
    inputs(1.0)
    return True
