# Content.rejected_by held the hook that held an item too: it is decided_by (the column is renamed;
# no row changes). The queue field's help text no longer hides its placeholder from the admin.

import stash.models
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('stash', '0004_stash_queue'),
    ]

    operations = [
        migrations.RenameField(
            model_name='content',
            old_name='rejected_by',
            new_name='decided_by',
        ),
        migrations.AlterField(
            model_name='stash',
            name='queue',
            field=models.CharField(blank=True, help_text="The queue its items' messages and sink deliveries go to; blank: the default queue (STASH_QUEUE). It needs workers of its own: celery -A hooksite worker -Q followed by this name.", max_length=200, validators=[stash.models.validate_queue_name], verbose_name='Celery queue'),
        ),
    ]
