"""The reach rule's query finds a learner's answers by index, however long their history.

The results page and every follow-up answer ask, per deep dive, whether the learner picked a choice that
leads to it. Asked as a join, the database read all of the learner's answers once per deep dive: with
10,000 answers the results page took over a second of CPU (`make bench`, results_10k_answers).
"""

import pytest
from django.db import connection

from lessons.models import DeepDive
from lessons.services import follow_up_flags


@pytest.mark.django_db
def test_whether_a_follow_up_is_reached_is_looked_up_by_learner_and_choice():
    query = DeepDive.objects.annotate(**follow_up_flags({"learner_id": 1})).values_list("reached")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # tiny test tables: make the planner show the index it can use
            cursor.execute("SET LOCAL enable_seqscan = off")
        plan = query.explain()
        assert "answer_learner_choice" in plan, plan
    else:
        plan = query.explain()
        assert "answer_learner_choice (learner_id=? AND choice_id=?)" in plan, plan
