"""A choice's points follow its verdict (lessons.scoring.choice_points): the stored column goes.

Scores already earned are kept: every answer stores its own points and maximum.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0017_topics_as_data"),
    ]

    operations = [
        migrations.RemoveField(model_name="choice", name="points"),
        migrations.AlterField(
            model_name="choice",
            name="verdict",
            field=models.CharField(
                choices=[("best", "Best"), ("acceptable", "Acceptable"), ("weak", "Weak")],
                help_text="Best earns the deep dive's points, acceptable half, weak none.",
                max_length=12,
            ),
        ),
    ]
