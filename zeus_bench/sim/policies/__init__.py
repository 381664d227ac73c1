"""Policies of the simulator, behind one small interface, found in a registry."""
