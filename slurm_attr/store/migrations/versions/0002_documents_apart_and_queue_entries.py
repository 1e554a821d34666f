"""documents apart from diagnoses, with cached job-page bodies; queue rows per epilog run,
with lease owner, source and end time

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "diagnosis_documents",
        sa.Column("diagnosis_id", sa.Integer(), nullable=False),
        sa.Column("document", sa.JSON(), nullable=False),
        sa.Column("page_version", sa.String(length=16), nullable=True),
        sa.Column("page_html", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["diagnosis_id"], ["diagnoses.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("diagnosis_id"),
    )
    op.execute("INSERT INTO diagnosis_documents (diagnosis_id, document) SELECT id, document FROM diagnoses")
    with op.batch_alter_table("diagnoses") as batch:
        batch.drop_column("document")
    with op.batch_alter_table("queue") as batch:
        batch.add_column(sa.Column("lease_owner", sa.String(length=128), nullable=True))
        batch.add_column(sa.Column("source", sa.String(length=16), nullable=False,
                                   server_default="epilog"))
        batch.add_column(sa.Column("entry", sa.String(length=128), nullable=True))
        batch.add_column(sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE queue SET entry = job_id || '.' || attempt")
    with op.batch_alter_table("queue") as batch:
        batch.alter_column("entry", existing_type=sa.String(length=128), nullable=False)
        batch.drop_constraint("uq_queue_attempt", type_="unique")
        batch.create_unique_constraint("uq_queue_entry", ["cluster", "entry"])
        batch.create_index("ix_queue_job", ["cluster", "job_id"])


def downgrade() -> None:
    with op.batch_alter_table("queue") as batch:
        batch.drop_index("ix_queue_job")
        batch.drop_constraint("uq_queue_entry", type_="unique")
        batch.create_unique_constraint("uq_queue_attempt", ["cluster", "job_id", "attempt"])
        for column in ("ended_at", "entry", "source", "lease_owner"):
            batch.drop_column(column)
    with op.batch_alter_table("diagnoses") as batch:
        batch.add_column(sa.Column("document", sa.JSON(), nullable=True))
    op.execute("UPDATE diagnoses SET document = (SELECT document FROM diagnosis_documents "
               "WHERE diagnosis_documents.diagnosis_id = diagnoses.id)")
    op.drop_table("diagnosis_documents")
