"""Placeholder until the Monte Carlo bot lands."""
