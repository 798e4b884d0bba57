"""The README's and the documentation's examples that use Spark run and print what they say."""

from __future__ import annotations

import pytest

from tests.docs_examples import PAGES, ROOT, run_page, uses_spark
from tests.spark.settings import restored

SPARK = [p for p in PAGES if uses_spark(p)]


@pytest.mark.parametrize("page", SPARK, ids=[str(p.relative_to(ROOT)) for p in SPARK])
def test_page_examples_print_what_they_say(spark, page, tmp_path) -> None:
    # a page may set the state store for its example
    with restored(spark, "spark.sql.streaming.stateStore.providerClass"):
        run_page(page, tmp_path)
