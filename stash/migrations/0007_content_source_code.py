# Items saved from code (the ORM, processing.submit without a source) are "code", no longer "api":
# a new choice and the field's default. Existing rows keep the source they were saved with.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('stash', '0006_held_count'),
    ]

    operations = [
        migrations.AlterField(
            model_name='content',
            name='source',
            field=models.CharField(choices=[('form', 'web form'), ('api', 'API'), ('admin', 'admin'), ('code', 'code (ORM)')], default='code', help_text='Where it was submitted: the web form, the API, the admin, or code.', max_length=10, verbose_name='source'),
        ),
    ]
