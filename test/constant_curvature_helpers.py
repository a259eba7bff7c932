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

"""The constant-curvature arc as the papers write it, for tests of the models that build it."""

import math

import numpy as np


def falkenhahn_transform(theta, phi, kappa):
    """^wH_h of Hadzic & Häseli (after Falkenhahn), typed in from the slide."""
    c, s, ct, st = math.cos(phi), math.sin(phi), math.cos(theta), math.sin(theta)
    return np.array([
        [c ** 2 * (ct - 1) + 1, s * c * (ct - 1), c * st, c * (1 - ct) / kappa],
        [s * c * (ct - 1), c ** 2 * (1 - ct) + ct, s * st, s * (1 - ct) / kappa],
        [-c * st, -s * st, ct, st / kappa],
        [0, 0, 0, 1]])
