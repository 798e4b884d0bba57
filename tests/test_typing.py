"""The public functions' types, as a user's type checker sees them: the package ships its
annotations (``py.typed``) and a table function gives back the kind of table it was given."""

import textwrap

from mypy import api

USER_CODE = """
import numpy as np
import polars as pl
import windowagg
from windowagg.spark import rolling_aggregate as spark_rolling
from pyspark.sql import DataFrame

events = pl.DataFrame({"t": [1, 2], "k": [1, 1], "v": [1.0, 2.0]})
queries = pl.DataFrame({"t": [2], "k": [1]})
rows = {"s": ("sum", "v", "range:1")}
reveal_type(windowagg.rolling_aggregate(events, time="t", key="k", aggs=rows))
reveal_type(windowagg.rolling_aggregate({"t": [1]}, time="t", aggs=rows, at=queries))
reveal_type(windowagg.window_aggregate(events, time="t", windows="tumbling:2", aggs={}))
reveal_type(windowagg.sliding_aggregate(np.ones(3), size=2))
reveal_type(windowagg.sliding_aggregate(np.ones(3), size=[2, "1s"], aggs={"s": "sum"}))

def on_spark(df: DataFrame) -> None:
    reveal_type(spark_rolling(df, time="t", aggs=rows))
"""


def test_a_type_checker_sees_the_public_types(tmp_path) -> None:
    code = tmp_path / "user.py"
    code.write_text(textwrap.dedent(USER_CODE))
    out, err, status = api.run(
        ["--ignore-missing-imports", "--cache-dir", str(tmp_path / "cache"), str(code)]
    )
    revealed = [
        line.split("Revealed type is ", 1)[1] for line in out.splitlines() if "Revealed" in line
    ]
    frame = '"polars.dataframe.frame.DataFrame"'
    array = "numpy.ndarray[tuple[Any, ...], numpy.dtype[Any]]"
    assert revealed == [
        frame,
        frame,  # at=: the queries' kind
        frame,
        f'"{array}"',
        f'"dict[str, {array}]"',
        '"pyspark.sql.dataframe.DataFrame"',
    ], out + err
    assert status == 0, out + err
