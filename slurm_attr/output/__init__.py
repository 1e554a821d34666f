"""Output: the versioned diagnosis JSON and its terminal summary."""
