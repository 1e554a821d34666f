"""Diagnosis store: SQLAlchemy models, queue and repository (SQLite or PostgreSQL)."""
