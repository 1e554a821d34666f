"""rendered job pages leave the store: the report caches them beside its own output

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("diagnosis_documents") as batch:
        batch.drop_column("page_html")
        batch.drop_column("page_version")


def downgrade() -> None:
    with op.batch_alter_table("diagnosis_documents") as batch:
        batch.add_column(sa.Column("page_version", sa.String(16), nullable=True))
        batch.add_column(sa.Column("page_html", sa.Text(), nullable=True))
