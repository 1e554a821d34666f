"""Draining the queue: the spool the epilog fills, database leases, retries and dead letters."""
