"""the root cause's suggested action on the diagnosis row, for the reports

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("diagnoses") as batch:
        batch.add_column(sa.Column("action", sa.Text(), nullable=True))
    # Existing rows get theirs from the stored document (JSON functions differ per database).
    bind = op.get_bind()
    docs = sa.table("diagnosis_documents", sa.column("diagnosis_id", sa.Integer),
                    sa.column("document", sa.JSON))
    diagnoses = sa.table("diagnoses", sa.column("id", sa.Integer), sa.column("action", sa.Text))
    for diag_id, doc in bind.execute(sa.select(docs.c.diagnosis_id, docs.c.document)).all():
        action = ((doc or {}).get("root_cause") or {}).get("action")
        if action:
            bind.execute(sa.update(diagnoses).where(diagnoses.c.id == diag_id).values(action=action))


def downgrade() -> None:
    with op.batch_alter_table("diagnoses") as batch:
        batch.drop_column("action")
