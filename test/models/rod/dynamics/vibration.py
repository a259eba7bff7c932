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

"""Natural frequencies of a recorded free vibration, for the dynamics tests."""

import numpy as np
from scipy.optimize import least_squares


def two_modes(t: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, float]:
    """
    Return the undamped angular frequencies [rad/s] of the two damped modes making up z(t).

    The FFT peak and the strongest peak above 3 times it start a least-squares fit of two
    damped sinusoids and a constant; omega = sqrt(omega_d^2 + sigma^2). Also returns the largest
    misfit as a fraction of the peak-to-peak swing (small: the two modes are all of it).
    """
    dt = t[1] - t[0]
    spectrum = np.abs(np.fft.rfft((z - z.mean()) * np.hanning(z.size), 16 * z.size))
    frequency = 2 * np.pi * np.fft.rfftfreq(16 * z.size, dt)
    first = frequency[np.argmax(spectrum)]
    second = frequency[np.argmax(np.where(frequency > 3 * first, spectrum, 0.0))]

    def residual(p):
        w1, s1, a1, b1, w2, s2, a2, b2, c = p
        return (np.exp(-s1 * t) * (a1 * np.cos(w1 * t) + b1 * np.sin(w1 * t))
                + np.exp(-s2 * t) * (a2 * np.cos(w2 * t) + b2 * np.sin(w2 * t)) + c - z)
    p = least_squares(residual, [first, 3.0, np.ptp(z) / 2, 0.0, second, 3.0,
                                 np.ptp(z) / 20, 0.0, z.mean()]).x
    return np.hypot(p[[0, 4]], p[[1, 5]]), float(np.abs(residual(p)).max() / np.ptp(z))
