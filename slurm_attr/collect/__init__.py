"""Collection: reading the observations of one attempt from logs, with per-source coverage."""
