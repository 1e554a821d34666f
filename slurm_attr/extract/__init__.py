"""Extraction: typed events from raw lines, timestamps placed on the job's timeline."""
