"""Scope: which job attempt, on which nodes, in which time window (execution-context connectors)."""
