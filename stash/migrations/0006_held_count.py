# Each hook config counts the items it held for review (held_count), which were counted as drops.
# Existing configs start at 0: past holds stay in dropped_count, as they were counted.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('stash', '0005_decided_by'),
    ]

    operations = [
        migrations.AddField(
            model_name='hookconfig',
            name='held_count',
            field=models.PositiveBigIntegerField(default=0, editable=False, help_text='Items this hook held for review (or, observing, would have).', verbose_name='held'),
        ),
    ]
