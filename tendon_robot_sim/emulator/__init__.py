"""Device emulator: the tendon motor driver and the laser tip sensor on serial ports.

ROS-free. :mod:`.endpoints` (pseudo-terminal, TCP, serial port), :mod:`.devices`
(the two devices and fault injection), :mod:`.plant` (the quasi-static robot that
moves them), :mod:`.rig` (all of it together); ``tendon-robot-sim emulate`` runs it.
"""
