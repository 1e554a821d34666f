"""The rule engine: filter, correlate, refine and outcome stages over typed events."""
