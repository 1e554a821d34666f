"""The attribution service: a REST API and a live dashboard over the engine and the store."""
