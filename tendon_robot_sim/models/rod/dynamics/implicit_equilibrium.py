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
The implicit simulator's inputs: the commands, their ramps, and their static equilibria.

A tension per tendon acts from the next step; a displacement is reached by a linear ramp
from where the tendon is (a motor does not jump: an inextensible tendon would need an
infinite tension to follow a jump), over the next ``advance`` or over ``displacement_ramp``
seconds of simulated time from the command (:class:`TendonInputs`).
:class:`~tendon_robot_sim.models.rod.dynamics.implicit.ImplicitSimulator` starts every run at
rest in the static equilibrium of its inputs (:meth:`StaticEquilibrium.place_at_rest`), and
checks a displacement command against the tendons' ``max_tension`` by the tensions of its
equilibrium (:meth:`StaticEquilibrium._static_tensions`). Both are solved on the simulator's own
dynamic path with the dynamic terms off (c0 = 0, no history), from the statics solver's answer
(:class:`~tendon_robot_sim.models.rod.statics.solver.StaticsSolver`), so that the first step
starts from exactly the state its own equations hold at rest.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from tendon_robot_sim import counted
from tendon_robot_sim.models.cosserat import ConvergenceError, StaticsInputError
from tendon_robot_sim.models.rod.dynamics.simulation import is_real
from tendon_robot_sim.models.rod.statics import _kernels as kernels
from tendon_robot_sim.models.rod.tendons._friction_kernels import FR_FROZEN, FR_TURNING
from tendon_robot_sim.models.sim_model import EquilibriumNotFound, InputError

# Fractions of the way from 0 to a displacement command whose equilibrium is not found, tried
# to tell a tendon pulled beyond max_tension from a lost solve: the first, and how many
LIMIT_SEARCH = (2.0 ** -8, 16)
TENSION, DISPLACEMENT = kernels.TENSION, kernels.DISPLACEMENT


class TendonInputs:
    """The commands of :class:`ImplicitSimulator` (its base class), per tendon."""

    @property
    def tensions(self) -> np.ndarray:
        """Tensions [N] of the last step (solved ones for displacement-controlled tendons)."""
        return self._tau.copy()

    @property
    def modes(self) -> list[str]:
        """Input of each tendon: 'tension' or 'displacement'."""
        return ['tension' if m == TENSION else 'displacement' for m in self._modes]

    def set_tensions(self, tensions) -> None:
        """
        Command tensions [N]: a sequence (every tendon) or a mapping {name: N} (those named).

        The tendons given are tension-controlled from now on. Each value finite, >= 0 and
        <= its ``max_tension``; InputError names the first bad one and nothing changes.
        """
        items = self._values(tensions, 'tensions')
        for i, value in items:
            if value < 0.0:
                raise InputError(f'tensions[{self.tendon_names[i]!r}]: must be >= 0 N (a '
                                 f'tendon cannot push), got {value:g}')
            if value > self._max_tensions[i]:
                raise InputError(f'tensions[{self.tendon_names[i]!r}]: must be <= max_tension '
                                 f'{self._max_tensions[i]:g} N, got {value:g}')
        # item by item: a setpoint stream calls this 50 times a second with two to four values
        commands = self._commands[TENSION]
        for i, value in items:
            commands[i] = value
            self._modes[i] = TENSION

    def set_displacements(self, displacements, check: bool = True) -> None:
        """
        Command displacements [m] pulled in (negative: paid out), like :meth:`set_tensions`.

        The tendons given are displacement-controlled from now on: their tensions are solved
        for, never negative (a tendon paid out goes slack). With ``check`` a displacement
        whose static equilibrium (under the other inputs) would need more than
        ``max_tension`` is refused (InputError naming the tendon); a step of a run that needs
        more is refused too (:class:`TensionLimitExceeded`).
        """
        modes = self._modes.copy()
        commands = self._commands[DISPLACEMENT].copy()
        for i, value in self._values(displacements, 'displacements'):
            modes[i] = DISPLACEMENT
            commands[i] = value
        if check:
            tensions, part = self._static_tensions(modes, commands)
            over = np.flatnonzero((modes == DISPLACEMENT) & (tensions > self._max_tensions))
            if over.size:
                i = over[0]
                name, limit = self.tendon_names[i], self._max_tensions[i]
                if part == 1.0:
                    raise InputError(f'displacements[{name!r}]: the equilibrium needs '
                                     f'{tensions[i]:.4g} N, above max_tension = {limit:g} N; '
                                     'refused')
                raise InputError(
                    f'displacements[{name!r}]: pulling the tendons there from 0 needs more than '
                    f'max_tension = {limit:g} N of tendon {name!r} ({tensions[i]:.4g} N at '
                    f'{part:.1%} of the way; the equilibrium of all of it was not found); refused')
        # a stream repeats its setpoint: only a new command (or a tendon newly driven by
        # displacement) starts a ramp, the same one again would stretch the rest of the way
        changed = np.any(modes != self._modes) or np.any(
            (modes == DISPLACEMENT) & (commands != self._commands[DISPLACEMENT]))
        self._commands[DISPLACEMENT][:] = commands
        self._modes[:] = modes
        if self.displacement_ramp is not None and changed:
            self._ramp_end = self.time + self.displacement_ramp

    def _values(self, values, field: str) -> list[tuple[int, float]]:
        """(tendon index, value) of each value a sequence or a {name: value} mapping gives."""
        if isinstance(values, Mapping):
            items = []
            for name, value in values.items():
                if name not in self.tendon_names:
                    raise InputError(f'{field}: unknown tendon {name!r} (known: '
                                     f'{", ".join(self.tendon_names)})')
                items.append((self.tendon_names.index(name), value, f'{field}[{name!r}]'))
        else:
            if isinstance(values, (str, bytes)) or not hasattr(values, '__len__'):
                raise InputError(f'{field}: must be a sequence of numbers or a mapping '
                                 f'{{tendon name: number}}, got {type(values).__name__}')
            values = list(np.ravel(values)) if isinstance(values, np.ndarray) else list(values)
            if len(values) != self.n_tendons:
                raise InputError(f'{field}: expected {counted(self.n_tendons, "value")} (one per '
                                 f'tendon {", ".join(self.tendon_names)}), got {len(values)}')
            items = [(i, v, f'{field}[{i}]') for i, v in enumerate(values)]
        for i, value, label in items:
            if not is_real(value) or not math.isfinite(value):
                raise InputError(f'{label}: must be a finite number, got {value!r}')
        return [(i, float(value)) for i, value, _ in items]

    def _displacement_inputs(self, n: int) -> np.ndarray:
        """
        Return the displacements [m] of the next ``n`` steps (n, n_tendons), on their ramp.

        From where each tendon is at the last step to its command: over these n steps, or
        with ``displacement_ramp`` until its end in simulated time, so that any cutting of a
        run into advances takes the same steps. Rows of tension-controlled tendons are unused.
        """
        was = self._current_displacements(self._solved_modes)
        steps = np.arange(1, n + 1)
        if self._ramp_end is None:
            ramp = steps / max(n, 1)
        else:       # what is left of the ramp, in steps: the same ramp for any advances
            left = (self._ramp_end - self.time) / self.dt
            left = round(left) if abs(left - round(left)) < 1e-6 else left   # sums of dt
            ramp = np.minimum(1.0, steps / left) if left > 0.0 else np.ones(n)
        return was + (self._commands[DISPLACEMENT] - was) * ramp[:, None]


class StaticEquilibrium:
    """
    The static start and the tension limits of :class:`ImplicitSimulator` (its base class).

    The simulator provides its plans (``_plan``, ``_static_plan``: the time step's, with its
    shooting nodes; ``_single_plan``: in one piece), ``_unknowns_for``, ``_solve``, its inputs
    (``_modes``, ``_commands``, ``_tip_load``), the buffers of a solve (``_traj``, ``_tau``,
    ``_lengths``, ``_bays``, ``_info``) and the history it restarts (``_respace``,
    ``_start_history``).
    """

    def _static_tensions(self, modes: np.ndarray,
                         displacements: np.ndarray) -> tuple[np.ndarray, float]:
        """
        Tensions [N] of the static equilibrium of these inputs, and 1; the state is left alone.

        When that equilibrium is not found, fractions of the way from 0 to the displacements
        are tried (LIMIT_SEARCH: doubled from a small one while found within the limits, then
        bisected between the last found and the first not found): the tensions of the first
        that needs more than a tendon's ``max_tension``, and that fraction (a tendon limit,
        not a lost solve); InputError (not found) if there is none.
        """
        saved = (self._modes.copy(), self._commands[DISPLACEMENT].copy(), self._traj.copy(),
                 self._tau.copy(), self._lengths.copy())
        self._modes[:], self._commands[DISPLACEMENT][:] = modes, displacements
        try:
            single = self._unknowns_for(modes, self._single_plan)
            kept = single.x.copy()
            try:
                self._static_solve()
                return self._tau.copy(), 1.0
            except InputError as error:
                not_found = error
            low, high = 0.0, 1.0      # found within the limits (0: at rest), not found
            part = LIMIT_SEARCH[0]
            for _ in range(LIMIT_SEARCH[1]):
                self._commands[DISPLACEMENT][:] = displacements * part
                try:
                    self._static_solve()
                    over = np.any((modes == DISPLACEMENT) & (self._tau > self._max_tensions))
                except InputError:
                    over, high = False, part
                if over:
                    return self._tau.copy(), part
                low = part if high != part else low
                # double while every fraction is found (found ones are fast), then bisect
                part = 2.0 * part if high == 1.0 and 2.0 * part < 1.0 else 0.5 * (low + high)
            raise not_found
        finally:
            single.x[:] = kept
            (self._modes[:], self._commands[DISPLACEMENT][:], self._traj[:], self._tau[:],
             self._lengths[:]) = saved

    def place_at_rest(self) -> None:
        """
        Put the robot at rest in the static equilibrium of the current inputs, at t = 0.

        Raises
        ------
        EquilibriumNotFound
            The equilibrium cannot be found.
        InputError
            It needs a tension above ``max_tension``.

        """
        modes = self._modes
        # the statics through the dynamic path (c0 = 0, no history) in one piece, then with
        # the nodes where it passes: z at every point
        solution = self._static_solve().copy()   # (the same unknowns when there are no nodes)
        unknowns = self._unknowns_for(modes)
        nodes = self._static_plan.nodes.size
        for j, row in enumerate(self._node_rows):
            self._static_plan.node_R[j] = self._traj[row, 3:12].reshape(3, 3)
        unknowns.x[:] = 0.0
        unknowns.x[:solution.size] = solution
        defects = np.zeros(unknowns.x.size)
        for j in range(nodes):
            # node j takes the propagated state (a defect against 0), which is right once the
            # nodes before it are
            kernels._residual(self._static_plan, modes, self._commands[TENSION],
                              self._commands[DISPLACEMENT], np.concatenate(self._tip_load),
                              unknowns.x, defects, self._traj, self._tau, self._lengths,
                              self._bays[id(self._static_plan)], unknowns.work, -1)
            first = unknowns.x.size - kernels.NODE_SIZE * (nodes - j)
            unknowns.x[first:first + kernels.NODE_SIZE] = defects[first:first + kernels.NODE_SIZE]
        self._solve(self._static_plan, unknowns)
        if self._info[3] != kernels.CONVERGED:
            raise EquilibriumNotFound('the static equilibrium of the inputs at t = 0 was not '
                                      'found with shooting nodes (scaled residual '
                                      f'{self._info[0]:.3g})')
        self._plan.node_R[:] = self._static_plan.node_R
        # the first step's bays start from the equilibrium's (not from an earlier run's)
        for step_memory, static_memory in zip(self._bays[id(self._plan)],
                                              self._bays[id(self._static_plan)]):
            step_memory[:] = static_memory
        self._check_limits(0.0)
        unknowns.xs[:] = unknowns.x
        unknowns.jac_ok[0] = False
        self._last = np.concatenate((self._tau, self._commands[DISPLACEMENT],
                                     *self._tip_load))
        self._solved_modes = modes.copy()
        self._q_last = self._commands[DISPLACEMENT].copy()
        Z = self._static_plan.dyn.Z
        self._Zold[:] = Z
        self._Zt[:] = 0.0
        self._plan.dyn.friction[FR_TURNING] = 0.0     # at rest no tendon's sliding turns
        self._plan.dyn.friction[FR_FROZEN] = 0.0
        self._respace(self.dt)
        self._good[:] = self._traj
        self.time = 0.0
        self._start_history(0.0, self._traj[-1, 0:3])
        self._failed: str | None = None

    def come_to_rest(self, duration: float = 0.0, exact: bool = False,
                     speed_tolerance: float = 0.0) -> None:
        """Put the robot at rest in the static equilibrium of its inputs (t = 0 again)."""
        self.place_at_rest()

    def _static_solve(self) -> np.ndarray:
        """
        Solve the static equilibrium of the inputs on the single plan; return its unknowns.

        From the statics solver's answer; tendons of both kinds: from its answer with the
        displacement-controlled tendons slack, then by continuation of their displacements
        (from those of that answer) in 1, 4 or 16 steps.

        Raises
        ------
        EquilibriumNotFound
            Not found.

        """
        modes = self._modes
        single = self._unknowns_for(modes, self._single_plan)
        single.x[:] = self._static_unknowns()
        target = self._commands[DISPLACEMENT].copy()
        mixed = np.any(modes == TENSION) and np.any(modes == DISPLACEMENT)
        start = (self._current_displacements(np.full_like(modes, TENSION)) if mixed
                 else target)
        guess = single.x.copy()
        try:
            for parts in (1, 4, 16):
                single.x[:] = guess
                for k in range(1, parts + 1):
                    self._commands[DISPLACEMENT][:] = start + (target - start) * k / parts
                    self._solve(self._single_plan, single)
                    if self._info[3] != kernels.CONVERGED:
                        break
                if self._info[3] == kernels.CONVERGED:
                    return single.x
        finally:
            self._commands[DISPLACEMENT][:] = target
        raise EquilibriumNotFound('the static equilibrium of the inputs was not found (scaled '
                                  f'residual {self._info[0]:.3g}); are they out of reach?')

    def _static_unknowns(self) -> np.ndarray:
        """
        Unknowns of the static equilibrium of the inputs, from the statics solver.

        With tendons of both kinds: that of the tensions, the others slack; the tendons'
        tensions and lengths are left in ``_tau`` and ``_lengths``.
        """
        modes, tension, q = self._modes, self._commands[TENSION], self._commands[DISPLACEMENT]
        try:
            if np.all(modes == DISPLACEMENT):
                result = self.statics.solve_displacements(q, *self._tip_load)
            else:   # tendons under displacement control start slack (then the dynamic path)
                result = self.statics.solve_tensions(np.where(modes == TENSION, tension, 0.0),
                                                     *self._tip_load)
        except StaticsInputError as error:
            raise InputError(f'the static equilibrium of the inputs at t = 0: {error}') from None
        except ConvergenceError as error:
            raise EquilibriumNotFound(
                f'the static equilibrium of the inputs at t = 0: {error}') from None
        self._tau[:], self._lengths[:] = result.tensions, result.tendon_lengths
        pl = self._plan
        R0 = pl.R0
        x = [*(R0.T @ result.base_force / pl.scale[0, 0:3]),
             *(R0.T @ result.base_moment / pl.scale[0, 3:6])]
        slack_scale = pl.tendon[kernels.TENDON_SLACK]
        for t in np.flatnonzero(modes == DISPLACEMENT):
            scale = pl.scale[0, 6 + t]
            x.append(result.tensions[t] / scale if result.tensions[t] > 0.0
                     else -result.slack[t] / (scale * slack_scale[t]))
        return np.array(x)
